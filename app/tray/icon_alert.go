package tray

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
)

// The alert icon is the normal one with a dot in its bottom-right corner,
// drawn here rather than kept as a second image so it always matches the
// icon it marks (build/appicon.png, wherever that changes).

// alertDot is the dot's colour: amber, which stands out on the icon's blue;
// its white ring keeps it apart from the icon on any panel.
var alertDot = color.NRGBA{R: 0xf5, G: 0x9e, B: 0x0b, A: 0xff}

// alertCentre is where the dot's centre is, as a fraction of the icon's
// width and height from its top-left corner.
const alertCentre = 0.72

// markAlert draws the alert dot on img.
func markAlert(img draw.Image) {
	b := img.Bounds()
	size := float64(min(b.Dx(), b.Dy()))
	cx, cy := float64(b.Min.X)+alertCentre*size, float64(b.Min.Y)+alertCentre*size
	r := 0.2 * size
	ring := max(1, 0.07*size)
	draw.DrawMask(img, b, image.NewUniform(color.White), image.Point{}, disc{cx, cy, r + ring}, b.Min, draw.Over)
	draw.DrawMask(img, b, image.NewUniform(alertDot), image.Point{}, disc{cx, cy, r}, b.Min, draw.Over)
}

// disc is a mask: opaque within radius r of (cx, cy), with an antialiased
// edge a pixel wide.
type disc struct{ cx, cy, r float64 }

func (d disc) ColorModel() color.Model { return color.AlphaModel }

func (d disc) Bounds() image.Rectangle {
	return image.Rect(int(math.Floor(d.cx-d.r))-1, int(math.Floor(d.cy-d.r))-1, int(math.Ceil(d.cx+d.r))+1, int(math.Ceil(d.cy+d.r))+1)
}

func (d disc) At(x, y int) color.Color {
	dist := math.Hypot(float64(x)+0.5-d.cx, float64(y)+0.5-d.cy)
	cover := math.Max(0, math.Min(1, d.r+0.5-dist))
	return color.Alpha{A: uint8(math.Round(cover * 255))}
}

// alertPNG is the PNG icon base with the alert dot.
func alertPNG(base []byte) ([]byte, error) {
	src, err := png.Decode(bytes.NewReader(base))
	if err != nil {
		return nil, fmt.Errorf("decode the tray icon: %w", err)
	}
	img := image.NewNRGBA(src.Bounds())
	draw.Draw(img, img.Bounds(), src, src.Bounds().Min, draw.Src)
	markAlert(img)
	var out bytes.Buffer
	if err := png.Encode(&out, img); err != nil {
		return nil, fmt.Errorf("encode the alert tray icon: %w", err)
	}
	return out.Bytes(), nil
}

// alertICO is the .ico icon base (the Windows tray takes .ico only) with the
// alert dot on each of its images, which must be 32-bit bitmaps, as
// ImageMagick writes them (icon_windows.go).
func alertICO(base []byte) ([]byte, error) {
	out := bytes.Clone(base)
	imgs, err := icoImages(out)
	if err != nil {
		return nil, err
	}
	for _, img := range imgs {
		markAlert(img)
	}
	return out, nil
}

// icoImages are views of the images of an .ico file (ICONDIR, then an
// ICONDIRENTRY per image, each pointing at a BITMAPINFOHEADER, the pixels and
// the AND mask); drawing on them changes ico.
func icoImages(ico []byte) ([]*dibImage, error) {
	le := binary.LittleEndian
	if len(ico) < 6 || le.Uint16(ico[0:]) != 0 || le.Uint16(ico[2:]) != 1 {
		return nil, errors.New("read the tray icon: not an .ico file")
	}
	n := int(le.Uint16(ico[4:]))
	if n == 0 || len(ico) < 6+16*n {
		return nil, errors.New("read the tray icon: truncated image directory")
	}
	imgs := make([]*dibImage, 0, n)
	for i := range n {
		entry := ico[6+16*i:]
		size, off := int(le.Uint32(entry[8:])), int(le.Uint32(entry[12:]))
		if off < 0 || size < 40 || off > len(ico)-size {
			return nil, fmt.Errorf("read the tray icon: image %d lies outside the file", i)
		}
		dib := ico[off : off+size]
		header := int(le.Uint32(dib[0:]))
		w, h := int(int32(le.Uint32(dib[4:]))), int(int32(le.Uint32(dib[8:])))/2 // the height counts the AND mask too
		bpp, compression := le.Uint16(dib[14:]), le.Uint32(dib[16:])
		if header < 40 || w <= 0 || h <= 0 || bpp != 32 || compression != 0 {
			return nil, fmt.Errorf("read the tray icon: image %d is not an uncompressed 32-bit bitmap (%d bits, compression %d)", i, bpp, compression)
		}
		maskStride := (w + 31) / 32 * 4
		if header+w*h*4+maskStride*h > len(dib) {
			return nil, fmt.Errorf("read the tray icon: image %d is truncated", i)
		}
		pix := dib[header : header+w*h*4]
		imgs = append(imgs, &dibImage{w: w, h: h, pix: pix, mask: dib[header+len(pix) : header+len(pix)+maskStride*h], maskStride: maskStride})
	}
	return imgs, nil
}

// dibImage is an icon's 32-bit bitmap as an image: rows bottom-up, pixels
// B, G, R, A with straight (not premultiplied) alpha, then a 1-bit AND mask
// (1: transparent) that Windows reads only where it ignores the alpha.
type dibImage struct {
	w, h       int
	pix, mask  []byte
	maskStride int
}

func (d *dibImage) ColorModel() color.Model { return color.NRGBAModel }
func (d *dibImage) Bounds() image.Rectangle { return image.Rect(0, 0, d.w, d.h) }

func (d *dibImage) offset(x, y int) int { return ((d.h-1-y)*d.w + x) * 4 }

func (d *dibImage) At(x, y int) color.Color {
	if !(image.Point{x, y}.In(d.Bounds())) {
		return color.NRGBA{}
	}
	p := d.pix[d.offset(x, y):]
	return color.NRGBA{R: p[2], G: p[1], B: p[0], A: p[3]}
}

func (d *dibImage) Set(x, y int, c color.Color) {
	if !(image.Point{x, y}.In(d.Bounds())) {
		return
	}
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	p := d.pix[d.offset(x, y):]
	p[0], p[1], p[2], p[3] = n.B, n.G, n.R, n.A
	bit := byte(0x80) >> (x % 8)
	if m := &d.mask[(d.h-1-y)*d.maskStride+x/8]; n.A > 0 {
		*m &^= bit
	} else {
		*m |= bit
	}
}
