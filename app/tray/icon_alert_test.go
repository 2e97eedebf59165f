package tray

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
)

// dotCentre is the pixel at the centre of the alert dot on a size×size icon.
func dotCentre(size int) (x, y int) {
	c := int(alertCentre * float64(size))
	return c, c
}

// The PNG alert icon is the icon with the dot: the same size, amber at the dot's centre,
// unchanged away from it.
func TestAlertPNGMarksTheIcon(t *testing.T) {
	if !strings.HasPrefix(string(icon), "\x89PNG") {
		t.Skip("this platform's icon is not a PNG (Windows: TestAlertICOMarksEveryImage)")
	}
	alert, err := alertPNG(icon)
	if err != nil {
		t.Fatal(err)
	}
	base, err := png.Decode(bytes.NewReader(icon))
	if err != nil {
		t.Fatal(err)
	}
	marked, err := png.Decode(bytes.NewReader(alert))
	if err != nil {
		t.Fatal(err)
	}
	if marked.Bounds() != base.Bounds() {
		t.Fatalf("alert icon bounds %v; want the icon's %v", marked.Bounds(), base.Bounds())
	}
	x, y := dotCentre(base.Bounds().Dx())
	if got := color.NRGBAModel.Convert(marked.At(x, y)); got != alertDot {
		t.Errorf("alert icon at the dot's centre (%d,%d) = %v; want %v", x, y, got, alertDot)
	}
	changed := 0
	quadrant := image.Rect(0, 0, base.Bounds().Dx()/2, base.Bounds().Dy()/2)
	for y := range base.Bounds().Dy() {
		for x := range base.Bounds().Dx() {
			b, m := color.NRGBAModel.Convert(base.At(x, y)), color.NRGBAModel.Convert(marked.At(x, y))
			if b == m {
				continue
			}
			changed++
			if (image.Point{x, y}).In(quadrant) {
				t.Errorf("alert icon differs at (%d,%d), far from the dot: %v; want %v", x, y, m, b)
			}
		}
	}
	if changed == 0 {
		t.Errorf("the alert icon is the icon")
	}
}

// testICO encodes images as an .ico of 32-bit bitmaps, as ImageMagick writes them (the
// Windows icon is only compiled there). The AND mask is 1 where a pixel is transparent.
func testICO(imgs ...*image.NRGBA) []byte {
	le := binary.LittleEndian
	var dir, data []byte
	dir = le.AppendUint16(le.AppendUint16(le.AppendUint16(dir, 0), 1), uint16(len(imgs)))
	offset := 6 + 16*len(imgs)
	for _, img := range imgs {
		w, h := img.Bounds().Dx(), img.Bounds().Dy()
		var dib []byte
		dib = le.AppendUint32(dib, 40)
		dib = le.AppendUint32(dib, uint32(w))
		dib = le.AppendUint32(dib, uint32(2*h))
		dib = le.AppendUint16(dib, 1)
		dib = le.AppendUint16(dib, 32)
		dib = append(dib, make([]byte, 24)...) // compression 0 and the rest unused
		for y := h - 1; y >= 0; y-- {
			for x := range w {
				c := img.NRGBAAt(x, y)
				dib = append(dib, c.B, c.G, c.R, c.A)
			}
		}
		stride := (w + 31) / 32 * 4
		for y := h - 1; y >= 0; y-- {
			row := make([]byte, stride)
			for x := range w {
				if img.NRGBAAt(x, y).A == 0 {
					row[x/8] |= 0x80 >> (x % 8)
				}
			}
			dib = append(dib, row...)
		}
		dir = append(dir, byte(w), byte(h), 0, 0)
		dir = le.AppendUint16(le.AppendUint16(dir, 1), 32)
		dir = le.AppendUint32(le.AppendUint32(dir, uint32(len(dib))), uint32(offset+len(data)))
		data = append(data, dib...)
	}
	return append(dir, data...)
}

// testIcon is a size×size icon: a blue square with a transparent border, and a distinct
// pixel at the top left so a flipped or mirrored read shows.
func testIcon(size int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	for y := 1; y < size-1; y++ {
		for x := 1; x < size-1; x++ {
			img.SetNRGBA(x, y, color.NRGBA{R: 0x1f, G: 0x6f, B: 0xeb, A: 0xff})
		}
	}
	img.SetNRGBA(1, 1, color.NRGBA{R: 0x12, G: 0x34, B: 0x56, A: 0x78})
	return img
}

// The .ico alert icon (Windows) is each of the icon's images with the dot, drawn exactly
// as on a plain image, the AND mask following the alpha; the icon itself is left as it was.
func TestAlertICOMarksEveryImage(t *testing.T) {
	sizes := []int{32, 16}
	var imgs []*image.NRGBA
	for _, s := range sizes {
		imgs = append(imgs, testIcon(s))
	}
	base := testICO(imgs...)
	before := bytes.Clone(base)
	alert, err := alertICO(base)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(base, before) {
		t.Errorf("alertICO changed the icon it marks")
	}
	read, err := icoImages(alert)
	if err != nil {
		t.Fatal(err)
	}
	if len(read) != len(sizes) {
		t.Fatalf("%d images in the alert icon; want %d", len(read), len(sizes))
	}
	for i, size := range sizes {
		want := testIcon(size)
		markAlert(want)
		if want.NRGBAAt(1, 1) != (color.NRGBA{R: 0x12, G: 0x34, B: 0x56, A: 0x78}) {
			t.Fatalf("the dot reached the top-left corner of the %d-pixel icon", size)
		}
		got := read[i]
		if got.Bounds() != want.Bounds() {
			t.Fatalf("image %d: bounds %v; want %v", i, got.Bounds(), want.Bounds())
		}
		for y := range size {
			for x := range size {
				if g, w := got.At(x, y), want.NRGBAAt(x, y); g != w {
					t.Fatalf("%d-pixel image at (%d,%d) = %v; want %v", size, x, y, g, w)
				}
				transparent := got.mask[(size-1-y)*got.maskStride+x/8]&(0x80>>(x%8)) != 0
				if transparent != (want.NRGBAAt(x, y).A == 0) {
					t.Fatalf("%d-pixel image at (%d,%d): AND mask transparent=%v with alpha %d", size, x, y, transparent, want.NRGBAAt(x, y).A)
				}
			}
		}
		if x, y := dotCentre(size); got.At(x, y) != alertDot {
			t.Errorf("%d-pixel image at the dot's centre = %v; want %v", size, got.At(x, y), alertDot)
		}
	}
}

// This platform's tray icon takes the dot (the PNG here, the .ico on Windows).
func TestAlertIconOfThisPlatform(t *testing.T) {
	alert, err := alertIcon()
	if err != nil {
		t.Fatal(err)
	}
	if len(alert) == 0 || bytes.Equal(alert, icon) {
		t.Errorf("alertIcon() = %d bytes, the same as the icon: %v; want the icon with the dot", len(alert), bytes.Equal(alert, icon))
	}
}

func TestAlertICORefusesWhatItCannotMark(t *testing.T) {
	valid := testICO(testIcon(16))
	eightBit := bytes.Clone(valid)
	binary.LittleEndian.PutUint16(eightBit[6+16+14:], 8)
	outside := bytes.Clone(valid)
	binary.LittleEndian.PutUint32(outside[6+12:], uint32(len(valid)))
	for _, tc := range []struct {
		name string
		ico  []byte
		want string
	}{
		{"a PNG", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), "not an .ico file"},
		{"an empty directory", []byte{0, 0, 1, 0, 0, 0}, "truncated image directory"},
		{"an image outside the file", outside, "outside the file"},
		{"an 8-bit image", eightBit, "not an uncompressed 32-bit bitmap"},
		{"a truncated image", valid[:len(valid)-8], "outside the file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := alertICO(tc.ico); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("alertICO(%s) = %v; want an error saying %q", tc.name, err, tc.want)
			}
		})
	}
}
