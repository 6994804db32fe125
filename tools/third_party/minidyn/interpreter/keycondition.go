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

// KeyRange returns the sort key term of a KeyConditionExpression on attribute name
// (after aliases), among its top-level AND terms, with the attribute on the left:
// op is one of =, <, <=, >, >=, BETWEEN or begins_with and placeholders the values it
// compares with (two for BETWEEN), as in "#pk = :v AND #sk BETWEEN :a AND :b". It
// is false when there is no such term or the expression does not parse (DynamoDB API
// Reference, Query, KeyConditionExpression: the sort key conditions).
func KeyRange(expression string, aliases map[string]string, name string) (string, []string, bool) {
	parsed := language.ParseCondition(expression)
	conditional := parsed.Expression

	if len(parsed.Errors) != 0 || conditional.Expression == nil {
		return "", nil, false
	}

	return keyRange(conditional.Expression, aliases, name)
}

// flipped is a comparison with its operands swapped.
var flipped = map[string]string{"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

func keyRange(e language.Expression, aliases map[string]string, name string) (string, []string, bool) {
	isName := func(e language.Expression) bool {
		ident, ok := e.(*language.Identifier)
		return ok && attributeName(ident.Value, aliases) == name
	}

	placeholder := func(e language.Expression) (string, bool) {
		ident, ok := e.(*language.Identifier)
		if !ok {
			return "", false
		}

		return ident.Value, strings.HasPrefix(ident.Value, ":")
	}

	switch x := e.(type) {
	case *language.InfixExpression:
		if x.Operator == "AND" {
			if op, vals, ok := keyRange(x.Left, aliases, name); ok {
				return op, vals, true
			}

			return keyRange(x.Right, aliases, name)
		}

		if _, ok := flipped[x.Operator]; !ok {
			return "", nil, false
		}

		if v, ok := placeholder(x.Right); ok && isName(x.Left) {
			return x.Operator, []string{v}, true
		}

		if v, ok := placeholder(x.Left); ok && isName(x.Right) {
			return flipped[x.Operator], []string{v}, true
		}
	case *language.BetweenExpression:
		from, fok := placeholder(x.Range[0])
		to, tok := placeholder(x.Range[1])

		if isName(x.Left) && fok && tok {
			return "BETWEEN", []string{from, to}, true
		}
	case *language.CallExpression:
		fn, ok := x.Function.(*language.Identifier)
		if !ok || fn.Value != "begins_with" || len(x.Arguments) != 2 || !isName(x.Arguments[0]) {
			return "", nil, false
		}

		if v, ok := placeholder(x.Arguments[1]); ok {
			return "begins_with", []string{v}, true
		}
	}

	return "", nil, false
}
