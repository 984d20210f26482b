package memory

import (
	"fmt"
	"math"
	"strings"
)

// lines splits text into its lines, without their line feeds. A final
// line feed ends the last line rather than starting an empty one, so
// "a\nb\n" is two lines, as insert_line counts them; "" is none.
func lines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// numbered writes ls as a file view numbers them: each line's number,
// right-aligned in 6 characters, a tab, the line; first is the number of
// ls[0].
func numbered(b *strings.Builder, ls []string, first int) {
	for i, l := range ls {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(b, "%6d\t%s", first+i, l)
	}
}

// lineOf is the 1-based line the byte at offset off of text is on.
func lineOf(text string, off int) int { return strings.Count(text[:off], "\n") + 1 }

// humanSize is n bytes as a listing shows a size, as du -h does (rounded
// up; one decimal below 10): 0B, 512B, 1.5K, 4.0K, 12K, 1.2M.
func humanSize(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%dB", n)
	}
	v := float64(n)
	units := "KMGT"
	i := -1
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if tenths := math.Ceil(v*10) / 10; tenths < 10 {
		return fmt.Sprintf("%.1f%c", tenths, units[i])
	}
	return fmt.Sprintf("%.0f%c", math.Ceil(v), units[i])
}

// group writes n with thousands separated by commas, for the bounds'
// messages: 65,536.
func group(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + group(-n)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
