package language

import "sync"

// maxParsedExpressions bounds each cache of parsed expressions: past it, the cache
// starts again empty (an application sends a few distinct expression strings, its
// values travelling as placeholders; a caller that builds every expression afresh
// only loses the cache).
const maxParsedExpressions = 4096

// ParsedCondition is a condition, key condition or filter expression as
// ParseConditionalExpression parses it, with the parser's errors.
type ParsedCondition struct {
	Expression *ConditionalExpression
	Errors     []string
}

// ParsedUpdate is an update expression as ParseUpdateExpression parses it, with the
// parser's errors and whether it used a feature the interpreter lacks.
type ParsedUpdate struct {
	Statement   *UpdateStatement
	Errors      []string
	Unsupported bool
}

// parsedCache keeps one parse per expression string. What it holds is shared by
// every caller and only read: evaluating an expression reads its tree and never
// changes it.
type parsedCache[V any] struct {
	mu sync.RWMutex
	m  map[string]V
}

func (c *parsedCache[V]) get(expression string, parse func(string) V) V {
	c.mu.RLock()
	v, ok := c.m[expression]
	c.mu.RUnlock()

	if ok {
		return v
	}

	v = parse(expression)

	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxParsedExpressions {
		c.m = map[string]V{}
	}
	c.m[expression] = v
	c.mu.Unlock()

	return v
}

var (
	conditions parsedCache[ParsedCondition]
	updates    parsedCache[ParsedUpdate]
)

// ParseCondition parses a condition, key condition or filter expression, once per
// distinct expression string: the result is shared and must not be changed.
func ParseCondition(expression string) ParsedCondition {
	return conditions.get(expression, func(s string) ParsedCondition {
		p := NewParser(NewLexer(s))
		e := p.ParseConditionalExpression()

		return ParsedCondition{Expression: e, Errors: p.Errors()}
	})
}

// ParseUpdate parses an update expression, once per distinct expression string: the
// result is shared and must not be changed.
func ParseUpdate(expression string) ParsedUpdate {
	return updates.get(expression, func(s string) ParsedUpdate {
		p := NewUpdateParser(NewLexer(s))
		stmt := p.ParseUpdateExpression()

		return ParsedUpdate{Statement: stmt, Errors: p.Errors(), Unsupported: p.IsUnsupportedExpression()}
	})
}
