package app

import (
	"testing"

	"longhaul/proxy"
)

func TestPressureNextLayer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ratio float64
		cfg   proxy.CompactionConfig
		layer int
		at    float64
	}{
		{"below every threshold", 0.1, proxy.CompactionConfig{}, 1, 0.4},
		{"past Layer 1", 0.45, proxy.CompactionConfig{}, 2, 0.55},
		{"past Layer 2", 0.6, proxy.CompactionConfig{}, 3, 0.7},
		{"at a threshold counts as reached", 0.7, proxy.CompactionConfig{}, 0, 0},
		{"past every threshold", 0.75, proxy.CompactionConfig{}, 0, 0},
		{"thresholds from the settings", 0.45, proxy.CompactionConfig{ThresholdL1: 0.5, ThresholdL2: 0.6, ThresholdL3: 0.9}, 1, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if layer, at := nextLayer(tc.ratio, thresholds(tc.cfg)); layer != tc.layer || at != tc.at {
				t.Errorf("nextLayer(%v, %+v) = %d at %v; want %d at %v", tc.ratio, tc.cfg, layer, at, tc.layer, tc.at)
			}
		})
	}
}
