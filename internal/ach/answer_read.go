package ach

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	nacha "github.com/moov-io/ach"
)

// Reading a file from the bank. Banks write NACHA files in more than one
// shape: some trim the trailing spaces of each line, some end lines with
// CRLF, some leave out the block filler (the 9999… lines that round a
// file up to a multiple of ten records), and some name a company by its
// 10-character identifier, not a routing number, as the file header's
// immediate destination or origin. All of these are read as they come;
// what would make a return land on the wrong entry is refused.
//
// Only spaces can be trimmed, and only the file header (its reference
// code) and the file control (its reserved tail) may end in spaces: every
// batch, entry and addenda record ends in a trace, batch or sequence
// number. So a short file header or file control is padded back to 94
// characters, while a short record of any other kind was cut short, and
// the file is refused naming its line: moov-io/ach would read the missing
// part as blanks. A line longer than 94 characters is refused too.
//
// What the file carries that the service does not apply is counted, not
// skipped: IAT returns and notifications of change, refused notifications
// of change and ADV entries as unsupported, forward entries (a file of
// payments, not of answers) as ignored.

// recordLength is the length of every NACHA record.
const recordLength = 94

// trimmable is, by record type, the shortest line a record of that type
// can be once its trailing spaces are trimmed: the file header ends with
// its format code at 40 (the names and reference code after it may be
// blank), the file control with its totals at 55. Records of other types
// end in a number and cannot be shortened: a short one is refused.
var trimmable = map[byte]int{'1': 40, '9': 55}

// received is a bank's file as read: the file, and what of it the import
// sets aside.
type received struct {
	File *nacha.File
	// Unsupported lists the entries that answer something the service
	// cannot apply, each as "TRACE WHAT" (the original trace number and
	// what the entry is).
	Unsupported []string
	// Forward counts entries that answer nothing (no return or
	// notification of change addenda).
	Forward int
}

// readOpts are the only leniencies taken from moov-io/ach: the immediate
// destination may be a company identifier, which its routing number check
// would refuse (the immediate origin is not checked as a routing number by
// default). readReceived checks both fields itself instead.
func readOpts() *nacha.ValidateOpts {
	return &nacha.ValidateOpts{BypassDestinationValidation: true}
}

// readReceived reads a bank's NACHA file (see above). A file it cannot
// read is an error naming the line at fault; nothing of it is used.
func readReceived(data []byte) (received, error) {
	norm, err := normalize(data)
	if err != nil {
		return received{}, err
	}
	r := nacha.NewReader(bytes.NewReader(norm))
	r.SetValidation(readOpts())
	file, err := r.Read()
	if err != nil {
		return received{}, err
	}
	fh := file.Header
	for _, f := range []struct{ name, value string }{
		{"ImmediateDestination", fh.ImmediateDestination}, {"ImmediateOrigin", fh.ImmediateOrigin},
	} {
		if !routingOrCompany(f.value) {
			return received{}, fmt.Errorf("line:%d record:FileHeader %s %q is neither a routing number nor a 10-character company identifier", fh.LineNumber, f.name, f.value)
		}
	}
	in := received{File: &file, Unsupported: []string{}}
	for _, b := range file.Batches {
		for _, ed := range b.GetEntries() {
			switch {
			case ed.Addenda98Refused != nil:
				in.Unsupported = append(in.Unsupported, ed.Addenda98Refused.OriginalTrace+" refused notification of change "+ed.Addenda98Refused.RefusedChangeCode)
			case ed.Addenda98 == nil && ed.Addenda99 == nil && ed.Addenda99Contested == nil && ed.Addenda99Dishonored == nil:
				in.Forward++
			}
		}
		for _, ed := range b.GetADVEntries() {
			in.Unsupported = append(in.Unsupported, fmt.Sprintf("%s ADV entry %d", ed.ACHOperatorRoutingNumber, ed.SequenceNumber))
		}
	}
	for _, b := range file.IATBatches {
		for _, ed := range b.Entries {
			switch {
			case ed.Addenda99 != nil:
				in.Unsupported = append(in.Unsupported, ed.Addenda99.OriginalTrace+" IAT return "+ed.Addenda99.ReturnCode)
			case ed.Addenda98 != nil:
				in.Unsupported = append(in.Unsupported, ed.Addenda98.OriginalTrace+" IAT notification of change "+ed.Addenda98.ChangeCode)
			default:
				in.Forward++
			}
		}
	}
	return in, nil
}

// normalize makes each line of data a 94-character record ending in LF:
// CR before LF goes, a short file header or file control is padded with
// spaces; any other short or long line is an error naming it. A file
// without line breaks (records back to back) is left to moov-io/ach,
// which splits it and refuses a length that is not a multiple of 94.
func normalize(data []byte) ([]byte, error) {
	text := strings.TrimRight(string(data), "\r\n")
	lines := strings.Split(text, "\n")
	if len(lines) == 1 && utf8.RuneCountInString(strings.TrimSuffix(lines[0], "\r")) > recordLength {
		return data, nil
	}
	var out bytes.Buffer
	out.Grow(len(lines) * (recordLength + 1))
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		n := utf8.RuneCountInString(l)
		shortest, ok := 0, false
		if strings.TrimSpace(l) != "" {
			shortest, ok = trimmable[l[0]]
		}
		switch {
		case n > recordLength:
			return nil, fmt.Errorf("line:%d is %d characters long; a NACHA record is %d", i+1, n, recordLength)
		case n < recordLength && strings.TrimSpace(l) != "" && (!ok || n < shortest):
			return nil, fmt.Errorf("line:%d is %d characters long and a NACHA record is %d: it was cut short, not trimmed", i+1, n, recordLength)
		}
		out.WriteString(l)
		out.WriteString(strings.Repeat(" ", recordLength-n))
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

// routingOrCompany reports whether a file header's immediate destination
// or origin (as moov-io/ach reads it: spaces and a routing number's
// leading zero trimmed) names someone: a 9-digit routing number or a
// 10-character company identifier of letters and digits, not all zeros.
func routingOrCompany(v string) bool {
	if (len(v) != 9 && len(v) != 10) || strings.Trim(v, "0") == "" {
		return false
	}
	for _, c := range v {
		if (c < '0' || c > '9') && (len(v) == 9 || c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}
