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
	rec := "021000021" + "O" + "011000015" + "0" + "020802" + "000000000" + "JPMORGAN CHASE BANK, NA             "
	path := filepath.Join(t.TempDir(), "FedACHdir.txt")
	if err := os.WriteFile(path, []byte(rec+strings.Repeat(" ", 155-len(rec))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err = LoadDirectory(path)
	if err != nil || !d.Full() {
		t.Fatalf("FedACH file: full = %v, err = %v", d != nil && d.Full(), err)
	}
	if _, err := d.Check("026009593"); err == nil {
		t.Error("a full directory accepted a routing number it does not list")
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
