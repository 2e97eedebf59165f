package store

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// TestAppendExchangesJSONIsEncodingJSON: the live feed's encoder writes exactly what
// json.Marshal writes, for records whose every field (found by reflection, so a field added
// to Exchange later is covered too) holds values of each kind that encodes differently: text
// that needs escaping, invalid UTF-8, floats that take an exponent, zero and zoned times, nil
// and empty slices, a missing and a present pointer.
func TestAppendExchangesJSONIsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	strs := []string{"", "plain", `quote " and \ back`, "<b>&amp;</b>", "tab\tnew\nline\r\x01\x1f", "é漢字", "\u2028\u2029", "bad \xff utf8", "sk-…[redacted]wxyz"}
	floats := []float64{0, 0.35, 1, -2.5, 1e-7, 1.5e-6, 123456.789, 1e20, 1e21, 3.4e38}
	zone := time.FixedZone("IST", 5*3600+1800)
	times := []time.Time{{}, time.Date(2026, 11, 25, 10, 1, 2, 3004, time.UTC), time.Date(2025, 1, 2, 3, 4, 5, 0, zone), time.Unix(0, 1_700_000_000_123_456_789)}
	// depth counts the exchanges v is nested in: a child's own children stay nil, or the
	// recursive Children field would grow the record without bound.
	var fill func(v reflect.Value, depth int)
	fill = func(v reflect.Value, depth int) {
		if v.Type() == reflect.TypeFor[Exchange]() {
			depth++
		}
		switch v.Kind() {
		case reflect.String:
			v.SetString(strs[rng.IntN(len(strs))])
		case reflect.Bool:
			v.SetBool(rng.IntN(2) == 0)
		case reflect.Int, reflect.Int64:
			if v.Type() == reflect.TypeFor[time.Duration]() {
				v.SetInt(rng.Int64N(int64(time.Hour)))
			} else {
				v.SetInt(rng.Int64N(1<<40) - 1<<20)
			}
		case reflect.Float64:
			v.SetFloat(floats[rng.IntN(len(floats))])
		case reflect.Struct:
			if v.Type() == reflect.TypeFor[time.Time]() {
				v.Set(reflect.ValueOf(times[rng.IntN(len(times))]))
				return
			}
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					fill(v.Field(i), depth)
				}
			}
		case reflect.Slice:
			if v.Type() == reflect.TypeFor[[]Exchange]() && depth > 1 {
				return
			}
			switch rng.IntN(3) {
			case 0: // nil
			case 1:
				v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			default:
				s := reflect.MakeSlice(v.Type(), 1+rng.IntN(3), 3)
				for i := range s.Len() {
					fill(s.Index(i), depth)
				}
				v.Set(s)
			}
		case reflect.Map:
			if rng.IntN(2) == 0 {
				m := reflect.MakeMap(v.Type())
				for range rng.IntN(3) {
					k, val := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
					fill(k, depth)
					fill(val, depth)
					m.SetMapIndex(k, val)
				}
				v.Set(m)
			}
		case reflect.Pointer:
			if rng.IntN(2) == 0 {
				p := reflect.New(v.Type().Elem())
				fill(p.Elem(), depth)
				v.Set(p)
			}
		default:
			t.Fatalf("the test does not fill a %s field", v.Kind())
		}
	}
	for round := range 300 {
		batch := make([]Exchange, round%4)
		for i := range batch {
			fill(reflect.ValueOf(&batch[i]).Elem(), 0)
		}
		if round == 0 {
			batch = append(batch, fullExchange(1, testNow), Exchange{})
		}
		want, err := json.Marshal(batch)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendExchangesJSON(nil, batch); !bytes.Equal(got, want) {
			t.Fatalf("AppendExchangesJSON =\n%s\nwant (json.Marshal)\n%s", got, want)
		}
	}
	if got := AppendExchangesJSON(nil, nil); string(got) != "null" {
		t.Errorf("AppendExchangesJSON(nil) = %s; want null", got)
	}
}

func BenchmarkAppendExchangesJSON(b *testing.B) {
	batch := make([]Exchange, 256)
	for i := range batch {
		batch[i] = RedactExchange(smallExchange(i))
		batch[i].Bodies = nil
	}
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			json.Marshal(batch) //nolint:errcheck // measured, not used
		}
	})
	b.Run("append", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf = AppendExchangesJSON(buf[:0], batch)
		}
	})
}

func TestAttemptsColumnIsEncodingJSON(t *testing.T) {
	start := time.Date(2026, 11, 25, 10, 0, 0, 5, time.UTC)
	for _, as := range [][]Attempt{
		nil,
		{{AccountID: 1, AccountName: "work", Status: 200, Start: start, Duration: time.Second}},
		{{AccountID: 2, AccountName: `"home" <&>`, Status: 429, Error: "rate\nlimited \xff", Start: start}, {AccountID: 3, Status: 0}},
	} {
		rows := make([]attemptRow, len(as))
		for i, a := range as {
			rows[i] = attemptRow{a.AccountID, a.AccountName, a.Status, a.Error, nanos(a.Start), int64(a.Duration)}
		}
		want, err := json.Marshal(rows)
		if err != nil {
			t.Fatal(err)
		}
		got := attemptsColumn(as)
		if got != string(want) {
			t.Errorf("attemptsColumn(%+v) = %s; want %s", as, got, want)
		}
		back, err := parseAttempts(got)
		if err != nil || len(back) != len(as) {
			t.Fatalf("parseAttempts(%s) = %+v, %v; want %d attempts", got, back, err, len(as))
		}
		for i := range as {
			if back[i].AccountID != as[i].AccountID || back[i].Status != as[i].Status || !back[i].Start.Equal(as[i].Start) && !as[i].Start.IsZero() || back[i].Duration != as[i].Duration {
				t.Errorf("parseAttempts: attempt %d = %+v; want %+v", i, back[i], as[i])
			}
		}
	}
}
