package phases

import "time"

// ParseTime parses a record's time, YYYY-MM-DDTHH:MM:SS[.fraction][zone]
// (a 'T' is required; the fraction trimmed to 6 digits, not rounded; zone
// Z, ±hh:mm, ±hhmm or none = UTC), into integer microseconds since the
// epoch. ok is false for anything else.
func ParseTime(s string) (us int64, ok bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	sec, ok6 := digits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || year < 1 || month < 1 || month > 12 || day < 1 ||
		day > daysIn(year, month) || hour > 23 || minute > 59 || sec > 59 {
		return 0, false
	}
	rest := s[19:]
	micro := 0
	if len(rest) > 0 && rest[0] == '.' {
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			if i <= 6 {
				micro = micro*10 + int(rest[i]-'0')
			}
			i++
		}
		if i == 1 {
			return 0, false
		}
		for n := i - 1; n < 6; n++ {
			micro *= 10
		}
		rest = rest[i:]
	}
	offset := 0
	switch {
	case rest == "" || rest == "Z":
	case rest[0] == '+' || rest[0] == '-':
		z := rest[1:]
		var hh, mm int
		var okh, okm bool
		switch {
		case len(z) == 5 && z[2] == ':':
			hh, okh = digits(z[0:2])
			mm, okm = digits(z[3:5])
		case len(z) == 4:
			hh, okh = digits(z[0:2])
			mm, okm = digits(z[2:4])
		}
		if !okh || !okm || hh > 23 || mm > 59 {
			return 0, false
		}
		offset = (hh*60 + mm) * 60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return 0, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC)
	return (t.Unix()-int64(offset))*1_000_000 + int64(micro), true
}

func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
