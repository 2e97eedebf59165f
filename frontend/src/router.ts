// A small hash router: the same dist/ is served by Wails and by the headless backend, and a
// hash keeps every page reachable by URL (#/request/ID) without server routes.

import { computed, ref } from 'vue'

export type PageName = 'monitor' | 'request' | 'sessions' | 'accounts' | 'settings' | 'dashboard' | 'connect' | 'login'

export const pages: PageName[] = ['monitor', 'sessions', 'dashboard', 'accounts', 'settings', 'connect']

export interface Route {
  page: PageName
  /** The exchange id on the request page. */
  id: string
}

export function parseHash(hash: string): Route {
  const path = hash.replace(/^#\/?/, '')
  const [head = '', ...rest] = path.split('/')
  if (head === 'request' && rest.length > 0) return { page: 'request', id: decodeURIComponent(rest.join('/')) }
  if ((pages as string[]).includes(head)) return { page: head as PageName, id: '' }
  // The login page is not in the navigation: the app shows it when the backend asks for the key.
  if (head === 'login') return { page: 'login', id: '' }
  return { page: 'monitor', id: '' }
}

export function href(page: PageName, id = ''): string {
  return page === 'request' ? `#/request/${encodeURIComponent(id)}` : `#/${page}`
}

const hash = ref(typeof location === 'undefined' ? '' : location.hash)
if (typeof window !== 'undefined') window.addEventListener('hashchange', () => (hash.value = location.hash))

export const route = computed(() => parseHash(hash.value))

export function navigate(page: PageName, id = ''): void {
  location.hash = href(page, id)
  hash.value = location.hash
}
