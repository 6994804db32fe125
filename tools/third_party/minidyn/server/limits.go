package server

import (
	"fmt"

	"github.com/aws/smithy-go"
	"github.com/truora/minidyn/core"
)

// Limits of DynamoDB that upstream minidyn did not enforce ("Constraints in Amazon
// DynamoDB", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Constraints.html,
// "Expression parameters"; 1 KB = 1,024 bytes).
const (
	// MaxExpressionSize is the longest expression string, 4 KB: "The maximum length of
	// any expression string is 4 KB".
	MaxExpressionSize = 4 << 10
	// MaxPlaceholderSize is the longest expression attribute name or value placeholder,
	// 255 bytes: "The maximum length of any single expression attribute name or
	// expression attribute value is 255 bytes".
	MaxPlaceholderSize = 255
	// MaxBatchGetSize is the most data one BatchGetItem returns, 16 MB, as the API
	// Reference's BatchGetItem example counts it: "if you ask to retrieve 100 items,
	// but each individual item is 300 KB in size, the system returns 52 items (so as
	// not to exceed the 16 MB limit)", which 16,000,000 bytes of ItemSize gives
	// (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html).
	MaxBatchGetSize = 16_000_000
)

// ItemSize is the size of item as DynamoDB counts it (core.ItemSize: "DynamoDB item
// sizes and formats").
func ItemSize(item map[string]*AttributeValue) int {
	return core.ItemSize(mapAttributeValueMapToTypes(item))
}

// validateExpressionLimits refuses an expression longer than MaxExpressionSize and a
// placeholder longer than MaxPlaceholderSize with ValidationException.
func validateExpressionLimits(exprNames map[string]string, exprValueKeys []string, expressions []string) error {
	for _, e := range expressions {
		if len(e) > MaxExpressionSize {
			return &smithy.GenericAPIError{Code: "ValidationException",
				Message: fmt.Sprintf("Invalid expression: Expression size has exceeded the maximum allowed size; expression size: %d", len(e))}
		}
	}

	for name := range exprNames {
		if len(name) > MaxPlaceholderSize {
			return &smithy.GenericAPIError{Code: "ValidationException",
				Message: fmt.Sprintf("%s: key longer than %d bytes; key: %s", invalidExpressionAttributeName, MaxPlaceholderSize, name)}
		}
	}

	for _, v := range exprValueKeys {
		if len(v) > MaxPlaceholderSize {
			return &smithy.GenericAPIError{Code: "ValidationException",
				Message: fmt.Sprintf("%s: key longer than %d bytes; key: %s", invalidExpressionAttributeValue, MaxPlaceholderSize, v)}
		}
	}

	return nil
}
