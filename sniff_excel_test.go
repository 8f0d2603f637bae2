package coachd_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// ole2 is an OLE2 compound file of 3 sectors whose directory (the
// second sector) holds one entry named name, its text in UTF-16 in the
// third.
func ole2(name, text string) []byte {
	b := append([]byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}, make([]byte, 3*512-8)...)
	b[0x1C], b[0x1D] = 0xFE, 0xFF
	utf16 := func(at int, s string) {
		for i, c := range s {
			b[at+2*i] = byte(c)
		}
	}
	utf16(512, name)
	b[512+0x40] = byte(2 * (len(name) + 1)) // the name's length, its NUL too
	b[512+0x42] = 2                         // a stream
	utf16(1024, text)
	return b
}

// TestCheckAttachmentExcel: a workbook sent where text is expected (a
// .xls typed application/vnd.ms-excel) is refused as an Excel workbook to
// save as CSV; another Office binary is not called one because its text
// says "Booking" or "Workbook" in UTF-16.
func TestCheckAttachmentExcel(t *testing.T) {
	for name, tc := range map[string]struct {
		data  []byte
		excel bool
	}{
		"XLS":          {ole2("Workbook", ""), true},
		"XLS95":        {ole2("Book", ""), true},
		"WordBooking":  {ole2("WordDocument", "Booking a ride to the airport"), false},
		"WordWorkbook": {ole2("WordDocument", "Open the Workbook"), false},
	} {
		t.Run(name, func(t *testing.T) {
			fe := coachd.CheckAttachment(coachd.MediaText, tc.data)
			if fe == nil {
				t.Fatal("accepted")
			}
			if got := strings.Contains(fe.Message, "Excel workbook"); got != tc.excel {
				t.Fatalf("%q: says Excel workbook %v, want %v", fe.Message, got, tc.excel)
			}
		})
	}
}
