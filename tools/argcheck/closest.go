package argcheck

// Closest is the name in valid nearest to got, by the rule that words the tools'
// did-you-mean for argument names (case-insensitive edit distance at most 2, or one name
// containing the other); "" when none is close. The commands use it for their flags.
func Closest(got string, valid []string) string { return closest(got, valid) }
