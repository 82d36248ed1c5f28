package wiring

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadDirectoryFollowsConfig(t *testing.T) {
	d, err := LoadDirectory("")
	if err != nil || d.Full() {
		t.Fatalf("no file: full = %v, err = %v; want the embedded sample", d.Full(), err)
	}
	// A FedACH participant directory record: routing number, office code,
	// servicing FRB, record type, change date, new routing number, name
	// (36), address (36), city (20), state, zip, zip extension, telephone,
	// status and data view codes, filler.
	rec := "021000021" + "O" + "011000015" + "1" + "020802" + "000000000" + "JPMORGAN CHASE BANK, NA             " +
		"1 MAIN ST" + strings.Repeat(" ", 27) + "NEW YORK" + strings.Repeat(" ", 12) + "NY" + "10017" + "0000" + "2125551234" + "11" + "     "
	path := filepath.Join(t.TempDir(), "FedACHdir.txt")
	if err := os.WriteFile(path, []byte(rec+"\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err = LoadDirectory(path)
	if err != nil || !d.Full() {
		t.Fatalf("FedACH file: full = %v, err = %v", d != nil && d.Full(), err)
	}
	if _, err := d.Check("026009593"); err == nil {
		t.Error("a full directory accepted a routing number it does not list")
	}
	// The Fedwire directory and the JSON download are refused, naming the
	// file and what it looks like.
	wire := filepath.Join(t.TempDir(), "fpddir.txt")
	fpd := "021000021" + "JPMCHASE          " + "JPMORGAN CHASE BANK, NA             " + "NY" + "NEW YORK                 " + "Y Y20261101"
	if err := os.WriteFile(wire, []byte(fpd+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDirectory(wire); err == nil || !strings.Contains(err.Error(), "ROUTING_DIRECTORY_FILE "+wire) || !strings.Contains(err.Error(), "Fedwire") {
		t.Errorf("Fedwire directory: err = %v, want one naming the file and Fedwire", err)
	}
	js := filepath.Join(t.TempDir(), "fedach.json")
	if err := os.WriteFile(js, []byte(`{"fedACHParticipants":{"fedACHParticipants":[]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDirectory(js); err == nil || !strings.Contains(err.Error(), "ROUTING_DIRECTORY_FILE "+js) || !strings.Contains(err.Error(), "JSON") {
		t.Errorf("JSON directory: err = %v, want one naming the file and JSON", err)
	}
	if _, err := LoadDirectory(filepath.Join(t.TempDir(), "missing.txt")); err == nil ||
		!strings.Contains(err.Error(), "ROUTING_DIRECTORY_FILE") {
		t.Errorf("missing file: err = %v, want one naming ROUTING_DIRECTORY_FILE", err)
	}
}

func TestLoadRailsFollowsConfig(t *testing.T) {
	r, err := LoadRails("")
	if err != nil || r.Rail("110000000") != "rtp" {
		t.Fatalf("no file: %v, 110000000 on %q; want the embedded sample", err, r.Rail("110000000"))
	}
	path := filepath.Join(t.TempDir(), "rails.csv")
	if err := os.WriteFile(path, []byte("routing_number,rail\n333333334,rtp\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r, err = LoadRails(path); err != nil || r.Rail("333333334") != "rtp" || r.Rail("222222226") != "fednow" {
		t.Fatalf("file: %v; want its row added to the sample", err)
	}
	if err := os.WriteFile(path, []byte("routing_number,rail\n333333334,wire\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRails(path); err == nil || !strings.Contains(err.Error(), "INSTANT_DIRECTORY_FILE") || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad file: err = %v, want one naming INSTANT_DIRECTORY_FILE and the line", err)
	}
}
