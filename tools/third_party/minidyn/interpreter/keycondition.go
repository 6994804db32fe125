package interpreter

import (
	"strings"

	"github.com/truora/minidyn/interpreter/language"
)

// KeyEquality returns the placeholder (":v") that a KeyConditionExpression compares
// attribute name (after aliases) equal to, as in "#pk = :v AND #sk > :w", and false
// when the expression has no such term among its top-level AND terms or does not
// parse. Every item the expression matches has that attribute equal to the
// placeholder's value, so a table can look up the items of that partition key
// instead of evaluating the expression on every item (DynamoDB API Reference, Query:
// "You must provide the name of the partition key attribute and a single value for
// that attribute").
func KeyEquality(expression string, aliases map[string]string, name string) (string, bool) {
	parsed := language.ParseCondition(expression)
	conditional := parsed.Expression

	if len(parsed.Errors) != 0 || conditional.Expression == nil {
		return "", false
	}

	return keyEquality(conditional.Expression, aliases, name)
}

func keyEquality(e language.Expression, aliases map[string]string, name string) (string, bool) {
	infix, ok := e.(*language.InfixExpression)
	if !ok {
		return "", false
	}

	switch infix.Operator {
	case "AND":
		if v, ok := keyEquality(infix.Left, aliases, name); ok {
			return v, true
		}

		return keyEquality(infix.Right, aliases, name)
	case "=":
		left, lok := infix.Left.(*language.Identifier)
		right, rok := infix.Right.(*language.Identifier)

		if !lok || !rok {
			return "", false
		}

		if attributeName(left.Value, aliases) == name && strings.HasPrefix(right.Value, ":") {
			return right.Value, true
		}

		if attributeName(right.Value, aliases) == name && strings.HasPrefix(left.Value, ":") {
			return left.Value, true
		}
	}

	return "", false
}

// attributeName resolves an identifier as language.Environment.Get does: through
// the aliases when it names one.
func attributeName(ident string, aliases map[string]string) string {
	if alias, ok := aliases[ident]; ok {
		return alias
	}

	return ident
}
