// Numbers, durations and times for people, in the current locale.

import { currentLocale } from '../i18n'
import { isZeroTime } from '../api/models'

export function num(n: number | undefined): string {
  return new Intl.NumberFormat(currentLocale()).format(n ?? 0)
}

/** compact: 1.2k, 3.4M. */
export function compact(n: number | undefined): string {
  return new Intl.NumberFormat(currentLocale(), { notation: 'compact', maximumFractionDigits: 1 }).format(n ?? 0)
}

export function pct(ratio: number | undefined, digits = 0): string {
  return new Intl.NumberFormat(currentLocale(), { style: 'percent', maximumFractionDigits: digits }).format(ratio ?? 0)
}

/** ms renders nanoseconds as "850 ms" or "2.4 s"; '–' for zero. */
export function ms(ns: number | undefined): string {
  if (!ns) return '–'
  const v = ns / 1e6
  if (v < 1000) return `${Math.round(v)} ms`
  return `${(v / 1000).toFixed(v < 10_000 ? 2 : 1)} s`
}

export function time(t: string | undefined): string {
  if (isZeroTime(t)) return '–'
  const d = new Date(t as string)
  return d.toLocaleTimeString(currentLocale(), { hour12: false })
}

export function dateTime(t: string | undefined): string {
  if (isZeroTime(t)) return '–'
  return new Date(t as string).toLocaleString(currentLocale(), { hour12: false })
}

export function bytes(n: number | undefined): string {
  const v = n ?? 0
  if (v < 1024) return `${v} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let x = v / 1024
  let i = 0
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024
    i++
  }
  return `${x.toFixed(x < 10 ? 1 : 0)} ${units[i]}`
}
