package merchant

import (
	"encoding/binary"
	"errors"
)

// The work a JPEG logo's decode may take. A decoder visits every block of
// every component a scan covers, and a progressive JPEG may hold any
// number of scans, each a few bytes long: a small file of thousands of
// scans keeps a CPU busy for seconds. Counting the scans needs only a walk
// over the segment headers, so both bounds are checked before any decode:
// at most maxJPEGScans scans, and at most maxJPEGBlockVisits 8×8 blocks
// visited over all scans: sixteen full passes over a grey logo of the
// largest size, about five over a colour one. A baseline logo makes one
// pass per component, and a progressive one at usual logo sizes stays far
// below the budget. The budget is what bounds a decode to well under
// 100 ms of one core; the scan count is the cheap, explainable refusal.
const (
	maxJPEGScans       = 32
	maxJPEGBlockVisits = 16 * (MaxLogoPixels / 8) * (MaxLogoPixels / 8)
)

// errJPEGStructure is a JPEG whose segments cannot be walked.
var errJPEGStructure = errors.New("malformed JPEG segments")

// jpegWork walks data's segments and returns its number of scans (SOS
// segments) and the 8×8 blocks a decoder visits over them (each scan's
// components times the frame's blocks per component, an upper bound for
// subsampled components). It stops at the end-of-image marker or at the
// first scan past maxJPEGScans.
func jpegWork(data []byte) (scans, blocks int, err error) {
	if len(data) < 4 || data[0] != 0xff || data[1] != 0xd8 {
		return 0, 0, errJPEGStructure
	}
	perComponent := 0
	i := 2
	for i < len(data) {
		if data[i] != 0xff {
			return 0, 0, errJPEGStructure
		}
		for i < len(data) && data[i] == 0xff { // fill bytes
			i++
		}
		if i >= len(data) {
			return 0, 0, errJPEGStructure
		}
		marker := data[i]
		i++
		switch {
		case marker == 0xd9: // EOI
			return scans, blocks, nil
		case marker == 0x01 || (marker >= 0xd0 && marker <= 0xd7): // TEM, RSTn: no length
			continue
		}
		if i+2 > len(data) {
			return 0, 0, errJPEGStructure
		}
		n := int(binary.BigEndian.Uint16(data[i:]))
		if n < 2 || i+n > len(data) {
			return 0, 0, errJPEGStructure
		}
		seg := data[i+2 : i+n]
		i += n
		switch {
		case marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc: // SOFn
			if len(seg) < 6 {
				return 0, 0, errJPEGStructure
			}
			h, w := int(binary.BigEndian.Uint16(seg[1:])), int(binary.BigEndian.Uint16(seg[3:]))
			perComponent = ((w + 7) / 8) * ((h + 7) / 8)
		case marker == 0xda: // SOS, then entropy-coded data up to the next marker
			if len(seg) < 1 {
				return 0, 0, errJPEGStructure
			}
			scans++
			blocks += int(seg[0]) * perComponent
			if scans > maxJPEGScans {
				return scans, blocks, nil
			}
			for i < len(data) {
				if data[i] == 0xff && i+1 < len(data) && data[i+1] != 0 && (data[i+1] < 0xd0 || data[i+1] > 0xd7) {
					break
				}
				i++
			}
		}
	}
	return scans, blocks, nil
}
