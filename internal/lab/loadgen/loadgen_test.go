package loadgen

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	if p := Percentile(d, 0.5); p != 50 {
		t.Errorf("p50 = %d", p)
	}
	if p := Percentile(d, 0.99); p != 99 {
		t.Errorf("p99 = %d", p)
	}
	if p := Percentile(nil, 0.5); p != 0 {
		t.Errorf("p50 of nothing = %d", p)
	}
}

func TestRunCountsOpsAndErrors(t *testing.T) {
	r := Run(context.Background(), "x", 4, 100*time.Millisecond, func(ctx context.Context, seq int64) error {
		time.Sleep(time.Millisecond)
		if seq%10 == 0 {
			return errors.New("every tenth fails")
		}
		return nil
	})
	if r.Ops == 0 || r.Errors == 0 || r.FirstError == "" || r.PerSec <= 0 || r.P50 < time.Millisecond || r.P99 < r.P50 {
		t.Errorf("result = %+v", r)
	}
	if ratio := float64(r.Errors) / float64(r.Ops+r.Errors); ratio < 0.05 || ratio > 0.15 {
		t.Errorf("error share %.2f, want about 0.10", ratio)
	}
}

func TestMergeCombinesParts(t *testing.T) {
	fast := Run(context.Background(), "op", 2, 100*time.Millisecond, func(ctx context.Context, _ int64) error {
		time.Sleep(time.Millisecond)
		return nil
	})
	slow := Run(context.Background(), "op", 2, 100*time.Millisecond, func(ctx context.Context, _ int64) error {
		time.Sleep(10 * time.Millisecond)
		return errors.New("slow and failing")
	})
	slow2 := Run(context.Background(), "op", 2, 100*time.Millisecond, func(ctx context.Context, _ int64) error {
		time.Sleep(10 * time.Millisecond)
		return nil
	})
	m := Merge(fast, slow, slow2)
	if m.Name != "op" || m.Ops != fast.Ops+slow2.Ops || m.Errors != slow.Errors || m.FirstError != "slow and failing" {
		t.Errorf("merged = %+v", m)
	}
	if want := float64(m.Ops) / (fast.Seconds + slow.Seconds + slow2.Seconds); m.PerSec != want {
		t.Errorf("per second %f, want %f", m.PerSec, want)
	}
	// The fast part has most of the operations, the slow one the tail.
	if m.P50 >= 10*time.Millisecond || m.P99 < 10*time.Millisecond {
		t.Errorf("p50 %v, p99 %v", m.P50, m.P99)
	}
}

func TestSequenceCallsOpNTimesInOrder(t *testing.T) {
	var seen []int
	r := Sequence(context.Background(), "seq", 10, func(_ context.Context, i int) error {
		seen = append(seen, i)
		if i == 3 {
			return errors.New("third failed")
		}
		if i == 9 {
			time.Sleep(20 * time.Millisecond)
		}
		return nil
	})
	if len(seen) != 10 || seen[0] != 0 || seen[9] != 9 {
		t.Fatalf("op called with %v", seen)
	}
	if r.Name != "seq" || r.Workers != 1 || r.Ops != 9 || r.Errors != 1 || r.FirstError != "third failed" {
		t.Errorf("result = %+v", r)
	}
	// Nine latencies, nearest rank: the one slow call is the p99, not the p50.
	if r.P99 < 20*time.Millisecond || r.P50 >= 20*time.Millisecond {
		t.Errorf("p50 %v, p99 %v", r.P50, r.P99)
	}
}
