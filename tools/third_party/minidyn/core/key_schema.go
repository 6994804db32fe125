package core

import (
	"errors"
	"fmt"
	"strings"

	"github.com/truora/minidyn/types"
)

// errInvalidKeyConditionCount matches DynamoDB ValidationException when the Key map
// does not contain exactly the expected number of attributes (hash + range if defined).
//
//nolint:stylecheck,staticcheck,ST1005 // AWS error message
var errInvalidKeyConditionCount = errors.New("The number of conditions on the keys is invalid")

type keySchema struct {
	HashKey   string
	RangeKey  string
	Secondary bool
}

// validatePrimaryKeyMap ensures Key-shaped maps (GetItem, DeleteItem, UpdateItem)
// contain exactly the hash key and, when applicable, the range key attribute names.
func (ks keySchema) validatePrimaryKeyMap(key map[string]*types.Item) error {
	if ks.Secondary {
		return nil
	}

	want := 1
	if ks.RangeKey != "" {
		want = 2
	}

	if len(key) != want {
		return fmt.Errorf("%w; expected %d keys, got %d", errInvalidKeyConditionCount, want, len(key))
	}

	if _, ok := key[ks.HashKey]; !ok {
		return fmt.Errorf("%w; missing hash key", errMissingField)
	}

	if ks.RangeKey != "" {
		if _, ok := key[ks.RangeKey]; !ok {
			return fmt.Errorf("%w; missing range key", errMissingField)
		}
	}

	return nil
}

func (ks keySchema) GetKey(attrs map[string]string, item map[string]*types.Item) (string, error) {
	key, err := ks.getKeyValue(attrs, item)
	if ks.Secondary && errors.Is(err, errMissingField) {
		// secondary indexes are sparse
		err = nil
	}

	if err == nil && !ks.Secondary {
		err = ks.checkKeyValues(item)
	}

	return key, err
}

// Lengths of a table's key values (Constraints in Amazon DynamoDB, "Partition keys and
// sort keys",
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Constraints.html): a
// partition key value of 1 to 2,048 bytes, a sort key value of 1 to 1,024 bytes.
const (
	maxHashKeySize  = 2048
	maxRangeKeySize = 1024
)

// emptyKeyValue starts DynamoDB's message for an empty key value, which the key's name
// ends.
const emptyKeyValue = "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: "

// checkKeyValues refuses a string or binary key value of item that is empty or longer
// than its limit, with DynamoDB's messages. A number's 38 digits are always within.
func (ks keySchema) checkKeyValues(item map[string]*types.Item) error {
	for _, k := range []struct {
		name string
		max  int
		over string
	}{
		{ks.HashKey, maxHashKeySize, "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of 2048 bytes"},
		{ks.RangeKey, maxRangeKeySize, "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes"},
	} {
		v := item[k.name]
		if k.name == "" || v == nil {
			continue
		}

		n := len(v.B)
		if v.S != nil {
			n = len(*v.S)
		} else if v.B == nil {
			continue
		}

		switch {
		case n == 0:
			return errors.New(emptyKeyValue + k.name)
		case n > k.max:
			return errors.New(k.over)
		}
	}

	return nil
}

func (ks keySchema) getKeyValue(attrs map[string]string, item map[string]*types.Item) (string, error) {
	key := []string{}

	val, err := getItemValue(item, ks.HashKey, attrs[ks.HashKey])
	if err != nil {
		return "", err
	}

	hashKeyStr := fmt.Sprintf("%v", val)

	if ks.RangeKey == "" {
		return hashKeyStr, nil
	}

	key = append(key, hashKeyStr)

	val, err = getItemValue(item, ks.RangeKey, attrs[ks.RangeKey])
	if err != nil {
		return "", err
	}

	key = append(key, fmt.Sprintf("%v", val))

	return strings.Join(key, "."), nil
}

func (ks *keySchema) describe() []types.KeySchemaElement {
	desc := []types.KeySchemaElement{}

	keySchemaElement := types.KeySchemaElement{
		AttributeName: ks.HashKey,
		KeyType:       "HASH",
	}
	desc = append(desc, keySchemaElement)

	if ks.RangeKey != "" {
		keySchemaElement := types.KeySchemaElement{
			AttributeName: ks.RangeKey,
			KeyType:       "RANGE",
		}
		desc = append(desc, keySchemaElement)
	}

	return desc
}

func (ks *keySchema) getKeyItem(item map[string]*types.Item) map[string]*types.Item {
	keyItem := map[string]*types.Item{}

	if v, ok := item[ks.HashKey]; ok {
		keyItem[ks.HashKey] = v
	}

	if v, ok := item[ks.RangeKey]; ok && ks.RangeKey != "" {
		keyItem[ks.RangeKey] = v
	}

	return keyItem
}
