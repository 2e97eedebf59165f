// @vitest-environment node
// The HTTP door's side of the login page: a 401 anywhere asks for the key; login sends it as
// JSON and clears the request only when the backend accepts it.

import { afterEach, describe, expect, it } from 'vitest'
import { httpDoor, httpPaths, login, loginNeeded, logout } from './door'
import { json, startBackend } from './testing/backend'

let backend: Awaited<ReturnType<typeof startBackend>> | undefined

afterEach(async () => {
  await backend?.close()
  backend = undefined
  loginNeeded.value = false
})

// A backend with the key "lh-key": the status route needs a session cookie login sets.
async function keyedBackend() {
  return startBackend((req, res, body) => {
    if (req.url === httpPaths.login) {
      const key = (JSON.parse(body) as { key?: string }).key
      if (key !== 'lh-key') return json(res, 401, { type: 'error', error: { type: 'authentication_error', message: 'wrong client key' } })
      res.setHeader('Set-Cookie', 'longhaul_session=s1; Path=/; HttpOnly; SameSite=Strict')
      return json(res, 200, { required: true })
    }
    if (req.url === httpPaths.logout) return json(res, 200, {})
    return json(res, 401, { type: 'error', error: { type: 'authentication_error', message: 'invalid or missing client key' } })
  })
}

describe('login', () => {
  it('a 401 from any route asks for the key', async () => {
    backend = await keyedBackend()
    expect(loginNeeded.value).toBe(false)
    await expect(httpDoor({ base: backend.origin }).request({ method: 'GET', path: httpPaths.status })).rejects.toMatchObject({ status: 401 })
    expect(loginNeeded.value).toBe(true)
  })

  it('a wrong key is refused and the login page stays', async () => {
    backend = await keyedBackend()
    loginNeeded.value = true
    await expect(login('guess', { base: backend.origin })).rejects.toMatchObject({ status: 401, message: 'wrong client key' })
    expect(loginNeeded.value).toBe(true)
  })

  it('the right key is sent once, as JSON, and ends the login page', async () => {
    backend = await keyedBackend()
    loginNeeded.value = true
    await login('lh-key', { base: backend.origin })
    expect(loginNeeded.value).toBe(false)
    const sent = backend.seen.find((s) => s.url === httpPaths.login)
    expect(sent).toMatchObject({ method: 'POST', contentType: 'application/json', body: '{"key":"lh-key"}' })
  })

  it('logout asks for the key again', async () => {
    backend = await keyedBackend()
    await logout({ base: backend.origin })
    expect(loginNeeded.value).toBe(true)
    expect(backend.seen.map((s) => s.url)).toContain(httpPaths.logout)
  })
})
