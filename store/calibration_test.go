package store

import (
	"context"
	"maps"
	"testing"
)

func TestCalibrationFactorsSurviveReopen(t *testing.T) {
	ctx := context.Background()
	st, path := openTemp(t)
	if got, err := st.CalibrationFactors(ctx); err != nil || len(got) != 0 {
		t.Fatalf("fresh CalibrationFactors() = %v, %v; want empty", got, err)
	}
	if err := st.SaveCalibrationFactors(ctx, map[string]float64{"claude": 1.25, "gemini": 0.8}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveCalibrationFactors(ctx, map[string]float64{"claude": 1.1}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	got, err := st2.CalibrationFactors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]float64{"claude": 1.1, "gemini": 0.8}; !maps.Equal(got, want) {
		t.Errorf("CalibrationFactors() after reopen = %v; want %v", got, want)
	}
}

func TestNewDatabaseIsIncrementalFromTheStart(t *testing.T) {
	st, _ := openTemp(t)
	var mode int
	if err := st.db.QueryRow(`PRAGMA auto_vacuum`).Scan(&mode); err != nil || mode != 2 {
		t.Errorf("PRAGMA auto_vacuum of a new database = %d, %v; want 2 (INCREMENTAL) without a VACUUM", mode, err)
	}
}
