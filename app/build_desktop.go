//go:build desktop

package app

const desktopBuild = true
