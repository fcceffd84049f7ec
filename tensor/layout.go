package tensor

// ValidateLayout reports whether layout can name the dimensions of a
// tensor: "" (no names), or one distinct uppercase letter per dimension,
// as in "HWC". The error wraps [ErrInvalid].
func ValidateLayout(layout string) error { return checkLayout(layout, len(layout)) }
