//go:build !desktop

package app

const desktopBuild = false
