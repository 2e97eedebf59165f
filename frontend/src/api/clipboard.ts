// Copying text: the Wails runtime's clipboard inside the window, navigator.clipboard in a browser,
// and the old execCommand('copy') as the last resort (WebKitGTK and non-secure origins).

import { currentDoor } from './door'

/** copyText returns whether the text reached the clipboard. */
export async function copyText(text: string): Promise<boolean> {
  if (await currentDoor().copyText(text)) return true
  try {
    if (globalThis.navigator?.clipboard?.writeText !== undefined) {
      await navigator.clipboard.writeText(text)
      return true
    }
  } catch {
    // Not allowed here (permissions, insecure origin); try the fallback.
  }
  return copyWithSelection(text)
}

function copyWithSelection(text: string): boolean {
  if (typeof document === 'undefined' || document.body === null) return false
  const area = document.createElement('textarea')
  area.value = text
  area.setAttribute('readonly', '')
  area.style.position = 'fixed'
  area.style.top = '0'
  area.style.left = '0'
  area.style.opacity = '0'
  document.body.appendChild(area)
  const focused = document.activeElement as HTMLElement | null
  area.select()
  let ok = false
  try {
    ok = document.execCommand('copy')
  } catch {
    ok = false
  }
  area.remove()
  focused?.focus()
  return ok
}
