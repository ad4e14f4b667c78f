// Package minipdf assembles small PDF files for tests: enough structure for R2R's PDF
// parser and r2r-mcp's secret scan to read their text, built in code instead of committed
// as binaries.
package minipdf

import (
	"bytes"
	"fmt"
)

// Assemble is a PDF 1.4 file of objects, numbered from 1 in order (object 1 must be the
// catalog), with its cross-reference table and trailer.
func Assemble(objects ...string) []byte {
	var out bytes.Buffer
	out.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objects))
	for i, o := range objects {
		offsets[i] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return out.Bytes()
}

// Stream is a stream object whose dictionary holds dict and the content's length.
func Stream(dict, content string) string {
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(content), content)
}
