package routing

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The Federal Reserve's FedACH participant directory (FedACHdir.txt) is
// one fixed-width record of 155 characters per line (1-based columns):
//
//	routing number 1–9, office code 10 (O main, B branch), servicing FRB
//	number 11–19, record type code 20 (0 a Federal Reserve Bank, 1 send to
//	this number, 2 send to the new routing number), change date 21–26
//	(MMDDYY), new routing number 27–35, customer name 36–71, address
//	72–107, city 108–127, state 128–129, zip 130–134, zip extension
//	135–138, telephone 139–148, institution status code 149, data view
//	code 150, filler 151–155.
//
// The Fed publishes other files a person may download instead: the
// Fedwire funds directory (fpddir.txt, 101-character records: routing
// number, telegraphic name, customer name, state, city, funds transfer
// status …), which lists banks reachable by wire, not by ACH, and the
// directory as JSON. Either is refused, saying which it looks like, as is
// any record that does not have this layout: a directory read wrong would
// refuse good routing numbers or accept ones no ACH entry can reach.
const (
	fedACHRecord  = 155
	fedwireRecord = 101
)

// LoadFedACH reads the FedACH participant directory and returns a full
// directory that also keeps the sandbox test numbers. A file of another
// layout, or any record that is not a FedACH record, is an error naming
// the line.
func LoadFedACH(r io.Reader) (*Directory, error) {
	d := &Directory{names: map[string]string{
		SandboxRouting1: embedded[SandboxRouting1],
		SandboxRouting2: embedded[SandboxRouting2],
		SandboxRouting3: embedded[SandboxRouting3],
	}, full: true}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1024), 1<<20)
	line, records := 0, 0
	for sc.Scan() {
		line++
		rec := strings.TrimRight(sc.Text(), "\r")
		if line == 1 {
			rec = strings.TrimPrefix(rec, "\ufeff")
		}
		if strings.TrimSpace(rec) == "" {
			continue
		}
		if records == 0 {
			if err := otherLayout(rec); err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
		}
		rn, name, err := fedACH(rec)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		d.names[rn] = name
		records++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read FedACH directory: %w", err)
	}
	if records == 0 {
		return nil, errors.New("the FedACH directory is empty")
	}
	return d, nil
}

// otherLayout tells what the file's first record looks like when it is
// not a FedACH record: JSON or a Fedwire directory record.
func otherLayout(rec string) error {
	t := strings.TrimSpace(rec)
	switch {
	case t[0] == '{' || t[0] == '[':
		return errors.New("this is JSON, not the FedACH participant directory (FedACHdir.txt, fixed-width 155-character records)")
	case len(rec) == fedwireRecord && ValidChecksum(rec[:9]) && strings.ContainsAny(rec[90:91], "YN") &&
		digits(rec[93:101]):
		return errors.New("this is a Fedwire funds directory record (fpddir.txt, 101 characters), not the FedACH participant directory (FedACHdir.txt, 155 characters)")
	}
	return nil
}

// fedACH reads one FedACH record: its routing number and customer name.
func fedACH(rec string) (string, string, error) {
	if len(rec) != fedACHRecord {
		return "", "", fmt.Errorf("%d characters; a FedACH directory record is %d", len(rec), fedACHRecord)
	}
	rn, office, frb, kind, changed, newRN := rec[0:9], rec[9], rec[10:19], rec[19], rec[20:26], rec[26:35]
	name := strings.Join(strings.Fields(rec[35:71]), " ")
	switch {
	case !ValidChecksum(rn):
		return "", "", fmt.Errorf("routing number %q (columns 1-9) is not a valid routing number", rn)
	case office != 'O' && office != 'B':
		return "", "", fmt.Errorf("office code %q (column 10) is neither O nor B", office)
	case !ValidChecksum(frb):
		return "", "", fmt.Errorf("servicing FRB number %q (columns 11-19) is not a routing number", frb)
	case kind != '0' && kind != '1' && kind != '2':
		return "", "", fmt.Errorf("record type code %q (column 20) is not 0, 1 or 2", kind)
	case !digits(changed):
		return "", "", fmt.Errorf("change date %q (columns 21-26) is not MMDDYY", changed)
	case kind == '2' && !ValidChecksum(newRN), kind != '2' && !digits(newRN):
		return "", "", fmt.Errorf("new routing number %q (columns 27-35) does not fit record type %c", newRN, kind)
	case name == "":
		return "", "", errors.New("customer name (columns 36-71) is blank")
	case !digits(rec[148:150]):
		return "", "", fmt.Errorf("institution status and data view codes %q (columns 149-150) are not digits", rec[148:150])
	}
	return rn, name, nil
}

func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
