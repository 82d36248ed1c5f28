package routing

import (
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Instant rails, as the directory names them. None in a file marks a bank
// the sample lists as unreachable.
const (
	RailRTP    = "rtp"
	RailFedNow = "fednow"
	RailNone   = "none"
)

//go:embed rails.csv
var embeddedRails string

// Rails maps routing numbers to the instant rail they receive on. The
// embedded sample holds the sandbox numbers (110000000 on rtp, 222222226 on
// fednow, 333333334 on none) and a few large banks; a file adds to it.
type Rails struct {
	rail map[string]string
}

// Rail is the rail rn receives on, "" when none reaches it.
func (r *Rails) Rail(rn string) string { return r.rail[rn] }

// Len is the number of reachable routing numbers.
func (r *Rails) Len() int { return len(r.rail) }

// EmbeddedRails returns the built-in sample.
func EmbeddedRails() *Rails {
	r := &Rails{rail: map[string]string{}}
	if err := r.add(strings.NewReader(embeddedRails)); err != nil {
		panic(err) // the embedded file is tested
	}
	return r
}

// LoadRails reads a CSV with the header line routing_number,rail whose rows
// add to and override the embedded sample. A row's rail is rtp, fednow or
// none (unreachable). Bad rows are errors naming their line.
func LoadRails(rd io.Reader) (*Rails, error) {
	r := EmbeddedRails()
	if err := r.add(rd); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Rails) add(rd io.Reader) error {
	cr := csv.NewReader(rd)
	cr.FieldsPerRecord = 2
	cr.TrimLeadingSpace = true
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return errors.New("instant directory is empty; want the header line routing_number,rail")
	}
	if err != nil {
		return fmt.Errorf("instant directory: %w", err)
	}
	if strings.TrimPrefix(head[0], "\ufeff") != "routing_number" || head[1] != "rail" {
		return fmt.Errorf("instant directory line 1: want the header routing_number,rail, got %s", strings.Join(head, ","))
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("instant directory: %w", err)
		}
		line, _ := cr.FieldPos(0)
		rn, rail := strings.TrimSpace(rec[0]), strings.ToLower(strings.TrimSpace(rec[1]))
		if !ValidChecksum(rn) {
			return fmt.Errorf("instant directory line %d: %q is not a routing number (9 digits, valid check digit)", line, rn)
		}
		switch rail {
		case RailRTP, RailFedNow:
			r.rail[rn] = rail
		case RailNone:
			delete(r.rail, rn)
		default:
			return fmt.Errorf("instant directory line %d: rail %q is not rtp, fednow or none", line, rec[1])
		}
	}
}
