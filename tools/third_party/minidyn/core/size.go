package core

import (
	"strings"

	"github.com/truora/minidyn/types"
)

// MaxItemSize is the largest item DynamoDB stores, 400 KB (Constraints in Amazon
// DynamoDB, "Items": item size; 1 KB = 1,024 bytes).
const MaxItemSize = 400 << 10

// ErrItemTooLarge is DynamoDB's answer to a write whose item would exceed MaxItemSize.
const ErrItemTooLarge = "Item size has exceeded the maximum allowed size"

// ItemSize is the size of an item as DynamoDB counts it (Developer Guide, "DynamoDB
// item sizes and formats"): the UTF-8 length of each attribute name plus its value's
// size.
func ItemSize(item map[string]*types.Item) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

// valueSize is the size of one attribute value: a string's UTF-8 bytes, a binary's raw
// bytes, a number's 1 byte per two significant digits plus 1, 1 byte for a null or
// Boolean, a set the sum of its elements, and a list or map 3 bytes plus 1 byte and
// the size (with the name, for a map) of each element.
func valueSize(v *types.Item) int {
	switch {
	case v == nil:
		return 0
	case v.S != nil:
		return len(*v.S)
	case v.N != nil:
		return numberSize(*v.N)
	case v.B != nil:
		return len(v.B)
	case v.BOOL != nil || v.NULL != nil:
		return 1
	case v.SS != nil || v.NS != nil || v.BS != nil:
		return setSize(v)
	case v.L != nil:
		n := 3
		for _, e := range v.L {
			n += 1 + valueSize(e)
		}
		return n
	case v.M != nil:
		n := 3
		for name, e := range v.M {
			n += 1 + len(name) + valueSize(e)
		}
		return n
	}
	return 0
}

func setSize(v *types.Item) int {
	n := 0
	for _, s := range v.SS {
		n += len(*s)
	}
	for _, s := range v.NS {
		n += numberSize(*s)
	}
	for _, b := range v.BS {
		n += len(b)
	}
	return n
}

// numberSize is 1 byte per two significant digits (leading and trailing zeroes
// trimmed, sign, point and exponent left out) plus 1.
func numberSize(n string) int {
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, strings.SplitN(strings.ToLower(n), "e", 2)[0])
	digits = strings.Trim(digits, "0")
	return (len(digits)+1)/2 + 1
}
