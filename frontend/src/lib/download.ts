// Saves text or a blob as a file: a blob link works in the browser and in the Wails webview.

export function download(name: string, data: string | Blob, type = 'application/json'): void {
  const url = URL.createObjectURL(data instanceof Blob ? data : new Blob([data], { type }))
  const a = document.createElement('a')
  a.href = url
  a.download = name
  document.body.appendChild(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 1000)
}
