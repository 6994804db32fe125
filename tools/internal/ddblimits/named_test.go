package ddblimits

import "testing"

// fields answers as a map would: set adds or replaces, del takes out, get finds.
func TestFields_AnswerAsAMap(t *testing.T) {
	var f fields[int]
	f.set("a", 1)
	f.set("b", 2)
	f.set("a", 3)
	f.del("b")
	f.del("c")
	f.set("c", 4)
	want := map[string]int{"a": 3, "c": 4}
	if len(f) != len(want) {
		t.Fatalf("%d fields %v; want %v", len(f), f, want)
	}
	for name, v := range want {
		if got, ok := f.get(name); !ok || got != v {
			t.Errorf("get(%q) = %d, %v; want %d, true", name, got, ok, v)
		}
	}
	if _, ok := f.get("b"); ok {
		t.Error("get(\"b\") found a deleted field")
	}
}
