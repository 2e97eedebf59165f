import { createPinia } from 'pinia'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createApp } from 'vue'
import { i18n } from '../i18n'
import { useProxyStore } from '../stores/proxy'
import { claudeCodeUnconfigured, defaultSettings, proxyStatus, settingsView } from '../testing/fixtures'
import { installWails } from '../testing/wails'
import ConnectView from './ConnectView.vue'

afterEach(() => {
  delete window.go
  delete window.runtime
  document.body.innerHTML = ''
})

/** Mounts the page with the proxy at baseURL; returns each snippet's code by its id. */
async function snippets(baseURL: string, clientKey = ''): Promise<Record<string, string>> {
  const { go } = installWails()
  const settings = defaultSettings()
  settings.proxy.client_key = clientKey
  go.Settings.Get.mockImplementation(async () => settingsView(settings))
  go.Clients.ClaudeCodeStatus.mockImplementation(async () => claudeCodeUnconfigured())
  const pinia = createPinia()
  const el = document.createElement('div')
  document.body.appendChild(el)
  const app = createApp(ConnectView).use(pinia).use(i18n)
  useProxyStore(pinia).status = proxyStatus({ baseURL })
  app.mount(el)
  await vi.waitFor(() => expect(el.querySelector('[data-testid=snippet-genaiNode]')).not.toBeNull())
  if (clientKey !== '') await vi.waitFor(() => expect(el.querySelector('[data-testid=snippet-shell] code')?.textContent).toContain('<proxy.client_key>'))
  const out: Record<string, string> = {}
  for (const s of el.querySelectorAll<HTMLElement>('[data-testid^=snippet-]')) {
    out[(s.dataset.testid ?? '').replace('snippet-', '')] = s.querySelector('code')?.textContent ?? ''
  }
  app.unmount()
  return out
}

describe('ConnectView', () => {
  it('points every client at the proxy, each the way it takes a base URL', async () => {
    const s = await snippets('http://0.0.0.0:8787') // bound to all interfaces: clients use loopback
    const u = 'http://127.0.0.1:8787'
    expect(s.openaiPython).toContain(`OpenAI(base_url="${u}/v1", api_key="longhaul")`)
    expect(s.openaiNode).toContain(`new OpenAI({ baseURL: "${u}/v1", apiKey: "longhaul" })`)
    expect(s.cherry).toContain(`API host: ${u}\n`) // Cherry Studio appends /v1/… itself
    expect(s.cherry).toContain('provider type OpenAI')
    expect(s.cline).toContain('API Provider: OpenAI Compatible')
    expect(s.cline).toContain(`Base URL: ${u}/v1\n`)
    expect(s.codex).toContain('model_provider = "longhaul"')
    expect(s.codex).toContain('[model_providers.longhaul]')
    expect(s.codex).toContain(`base_url = "${u}/v1"`)
    expect(s.codex).toContain('wire_api = "responses"')
    expect(s.codex).toContain('env_key = "LONGHAUL_API_KEY"')
    expect(s.codexEnv).toContain('export LONGHAUL_API_KEY=longhaul')
    expect(s.geminiCli).toContain(`export GOOGLE_GEMINI_BASE_URL=${u}\n`)
    expect(s.geminiCli).toContain('export GEMINI_API_KEY=longhaul')
    expect(s.genaiPython).toContain(`genai.Client(api_key="longhaul", http_options={"base_url": "${u}"})`)
    expect(s.genaiNode).toContain(`new GoogleGenAI({ apiKey: "longhaul", httpOptions: { baseUrl: "${u}" } })`)
    expect(s.shell).toContain(`export ANTHROPIC_BASE_URL=${u}\n`)
  })

  it('sends Claude Code to an OpenAI-compatible account through a model map entry the settings accept', async () => {
    const s = await snippets('http://127.0.0.1:9000')
    const code = s.claudeCodeOpenAI ?? ''
    expect(code).toContain('longhaul account add --kind openai --base-url https://api.deepseek.com')
    const m = /proxy\.model_map '(.*)'/.exec(code)
    expect(m).not.toBeNull()
    expect(JSON.parse(m?.[1] ?? '')).toEqual([{ pattern: 'claude-*', model: 'deepseek-v4-flash', account: 'openai' }])
    expect(code).toContain('export ANTHROPIC_BASE_URL=http://127.0.0.1:9000\n')
  })

  it('names the client key instead of showing it', async () => {
    const s = await snippets('http://127.0.0.1:8787', 'lh-secret-client-key')
    for (const [id, code] of Object.entries(s)) {
      expect(code, id).not.toContain('lh-secret-client-key')
    }
    expect(s.codexEnv).toContain('export LONGHAUL_API_KEY=<proxy.client_key>')
    expect(s.geminiCli).toContain('export GEMINI_API_KEY=<proxy.client_key>')
  })
})
