// vue-i18n set up once for the app and for the api layer's messages. A key missing in a locale
// is logged as "[i18n] missing key" (also in production builds, which drop vue-i18n's own
// warnings) and kept in missingKeys, so tests can fail on it.

import { createI18n } from 'vue-i18n'
import { en } from './en'
import { zhCN } from './zh-CN'

export const locales = ['en', 'zh-CN'] as const
export type Locale = (typeof locales)[number]

export const missingKeys: string[] = []

export const i18n = createI18n({
  legacy: false,
  locale: 'en',
  fallbackLocale: false,
  messages: { en, 'zh-CN': zhCN },
  missingWarn: false,
  fallbackWarn: false,
  missing: (locale: string, key: string) => {
    const entry = `${locale}:${key}`
    if (!missingKeys.includes(entry)) {
      missingKeys.push(entry)
      console.error(`[i18n] missing key "${key}" in locale ${locale}`)
    }
    return key
  },
})

declare global {
  interface Window {
    __longhaulMissingKeys?: string[]
  }
}
if (typeof window !== 'undefined') window.__longhaulMissingKeys = missingKeys

/** t for code outside components (the api layer). */
export function t(key: string, params: Record<string, unknown> = {}): string {
  return i18n.global.t(key, params)
}

export function setLocale(l: string): void {
  const locale: Locale = l === 'zh-CN' ? 'zh-CN' : 'en'
  i18n.global.locale.value = locale
  if (typeof document !== 'undefined') document.documentElement.lang = locale
}

export function currentLocale(): Locale {
  return i18n.global.locale.value as Locale
}
