//go:build !desktop

package desktop

// desktopBuild: Wails opens a window only in a binary built with the desktop tag.
const desktopBuild = false
