package app

import (
	"testing"

	"longhaul/proxy"
)

func TestPressureNextLayer(t *testing.T) {
	for _, tc := range []struct {
		ratio float64
		cfg   proxy.CompactionConfig
		layer string
		at    float64
	}{
		{0.1, proxy.CompactionConfig{}, "Layer-1", 0.4},
		{0.45, proxy.CompactionConfig{}, "Layer-2", 0.55},
		{0.6, proxy.CompactionConfig{}, "Layer-3", 0.7},
		{0.75, proxy.CompactionConfig{}, "", 0},
		{0.45, proxy.CompactionConfig{ThresholdL1: 0.5, ThresholdL2: 0.6, ThresholdL3: 0.9}, "Layer-1", 0.5},
	} {
		var layer string
		var at float64
		for i, th := range thresholds(tc.cfg) {
			if tc.ratio < th {
				layer, at = []string{"Layer-1", "Layer-2", "Layer-3"}[i], th
				break
			}
		}
		if layer != tc.layer || at != tc.at {
			t.Errorf("next layer at ratio %v with %+v = %q at %v; want %q at %v", tc.ratio, tc.cfg, layer, at, tc.layer, tc.at)
		}
	}
}
