package cli

import (
	"io"
	"sync"
	"unicode/utf8"
)

// Human-readable output (status lines, tables, Markdown, report text)
// prints names taken from flags and artifacts (test names, tags, run ids):
// a control character in one could move the cursor, recolour or retitle a
// terminal, or forge a line. Every C0 control, DEL, every C1 control
// (U+0080–U+009F) and every byte that is not UTF-8 is printed as \xNN
// (its byte, or its code point for C1). JSON output is written unescaped
// (its encoder escapes what JSON needs).

// Escape returns s with every control character, newline and tab included,
// as \xNN: for a single field (a name inside a line or a table cell).
func Escape(s string) string {
	return string(appendEscaped(nil, []byte(s), false))
}

// Text returns a writer that escapes every control character written to w
// except newline and tab (the layout of the lines themselves); a multi-byte
// character split across writes is held until it is whole.
func Text(w io.Writer) io.Writer {
	if t, ok := w.(*textWriter); ok {
		return t
	}
	return &textWriter{w: w}
}

type textWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte // the start of a multi-byte character, at most 3 bytes
}

func (t *textWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	in := p
	if len(t.pending) > 0 {
		in = append(append([]byte(nil), t.pending...), p...)
		t.pending = t.pending[:0]
	}
	// Hold an incomplete character at the end for the next write.
	if cut := incompleteTail(in); cut < len(in) {
		t.pending = append(t.pending, in[cut:]...)
		in = in[:cut]
	}
	if _, err := t.w.Write(appendEscaped(make([]byte, 0, len(in)+8), in, true)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// incompleteTail is where an unfinished (but so far valid) UTF-8 sequence
// at the end of b starts, or len(b).
func incompleteTail(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-3; i-- {
		if utf8.RuneStart(b[i]) {
			if b[i] >= utf8.RuneSelf && !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

const hexDigits = "0123456789abcdef"

func appendHex(dst []byte, c byte) []byte {
	return append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
}

// appendEscaped appends b to dst with controls as \xNN; keepLayout keeps
// newline and tab.
func appendEscaped(dst, b []byte, keepLayout bool) []byte {
	for len(b) > 0 {
		c := b[0]
		if c < utf8.RuneSelf {
			switch {
			case keepLayout && (c == '\n' || c == '\t'):
				dst = append(dst, c)
			case c < 0x20 || c == 0x7f:
				dst = appendHex(dst, c)
			default:
				dst = append(dst, c)
			}
			b = b[1:]
			continue
		}
		r, size := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && size == 1:
			dst = appendHex(dst, c)
		case r >= 0x80 && r <= 0x9f:
			dst = appendHex(dst, byte(r))
		default:
			dst = append(dst, b[:size]...)
		}
		b = b[size:]
	}
	return dst
}

// Raw is the writer under a Text writer (w itself otherwise): for the
// program's own terminal control, such as a countdown's carriage return.
func Raw(w io.Writer) io.Writer {
	if t, ok := w.(*textWriter); ok {
		return t.w
	}
	return w
}
