package server_test

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// msExcel is the type Windows browsers give a .csv file (the registry's
// Content Type for .csv when Excel is installed).
const msExcel = "application/vnd.ms-excel"

// xlsFile is the start of an Excel 97-2003 workbook: an OLE2 compound
// file whose directory names its Workbook stream (in UTF-16).
func xlsFile() []byte {
	b := append([]byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}, make([]byte, 1024-8)...)
	b[0x1C], b[0x1D] = 0xFE, 0xFF // byte order
	for i, c := range "Workbook" {
		b[512+2*i] = byte(c)
	}
	b[512+0x40], b[512+0x42] = 18, 2 // its name's length; a stream
	return b
}

// xlsxFile is an Excel workbook: a ZIP holding xl/workbook.xml.
func xlsxFile(t *testing.T) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"[Content_Types].xml", "xl/workbook.xml"} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("<x/>"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestExcelTypedCSV: a Windows browser types a .csv file
// application/vnd.ms-excel, and every door that reads a declared type
// (useChat's file parts, the OpenAI door's data: URLs, /v1/chat's inline
// attachments) refused it as not a document type, so a Windows user could
// not attach a CSV. The bytes decide now, as the upload door's sniffing
// does: text is a text document; a real workbook (.xls, .xlsx) is refused
// saying it is an Excel workbook to save as CSV, and nothing reaches the
// model.
func TestExcelTypedCSV(t *testing.T) {
	csv := "day,km\nmon,120\ntue,95\n"
	for _, door := range textDoors(t) {
		t.Run(door.name, func(t *testing.T) {
			t.Run("OK", func(t *testing.T) {
				e := MustChatEnv(t, nil)
				e.fake.Enqueue(anthropictest.Text("Read it.", 4))
				url := "data:" + msExcel + ";base64," + base64.StdEncoding.EncodeToString([]byte(csv))
				if status, body := door.send(e, [][3]string{{"runs.csv", msExcel, url}}); status != 200 {
					t.Fatalf("%d %s", status, body)
				}
				reqs := e.fake.Requests()
				if len(reqs) != 1 {
					t.Fatalf("%d model requests", len(reqs))
				}
				msgs := reqs[0].Messages()
				kinds, data := sources(t, msgs[len(msgs)-1].Blocks)
				if strings.Join(kinds, ",") != "document:text:text/plain,text" || data[0] != csv {
					t.Fatalf("the user message's blocks: %v %q", kinds, data)
				}
			})
			for name, file := range map[string][]byte{"ErrXLS": xlsFile(), "ErrXLSX": xlsxFile(t)} {
				t.Run(name, func(t *testing.T) {
					e := MustChatEnv(t, nil)
					url := "data:" + msExcel + ";base64," + base64.StdEncoding.EncodeToString(file)
					status, body := door.send(e, [][3]string{{"runs.xls", msExcel, url}})
					if status != 400 || !strings.Contains(body, "Excel workbook") || !strings.Contains(body, "CSV") {
						t.Fatalf("%d %s; want a 400 saying it is an Excel workbook to save as CSV", status, body)
					}
					if n := len(e.fake.Requests()); n != 0 {
						t.Errorf("%d model requests", n)
					}
				})
			}
		})
	}
	t.Run("Upload", func(t *testing.T) {
		e := MustChatEnv(t, nil)
		if u := e.mustUpload(e.alice.key, "runs.csv", []byte(csv)); u.MediaType != coachd.MediaText {
			t.Errorf("upload of a CSV: %s", u.MediaType)
		}
		r := e.upload(e.alice.key, "runs.xlsx", xlsxFile(t))
		if r.status != 400 || !strings.Contains(string(r.body), "Excel workbook") {
			t.Errorf("upload of a workbook: %d %s", r.status, r.body)
		}
	})
}
