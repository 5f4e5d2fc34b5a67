package elicit_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
)

// schemaOf is the schema FormOf infers for T.
func schemaOf[T any]() (*elicit.Schema, error) {
	f, err := elicit.FormOf[T]()
	if err != nil {
		return nil, err
	}
	return f.Schema(), nil
}

// schemaJSON infers T's schema and returns its wire form.
func schemaJSON[T any](t *testing.T) string {
	t.Helper()
	s, err := schemaOf[T]()
	if err != nil {
		t.Fatalf("FormOf: %v", err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// same checks that the inferred schema equals the one built by hand.
func same[T any](t *testing.T, fields ...*elicit.Field) {
	t.Helper()
	want, err := elicit.NewSchema(fields...)
	if err != nil {
		t.Fatalf("NewSchema: %v", err)
	}
	w, _ := json.Marshal(want)
	if got := schemaJSON[T](t); got != string(w) {
		t.Errorf("inferred schema\n got  %s\n want %s", got, w)
	}
}

func TestFormOfPrimitivesAndTags(t *testing.T) {
	type Profile struct {
		Name     string    `json:"name" title:"Your name" description:"as on the badge" minLength:"1" maxLength:"40" default:"Ada"`
		Email    string    `json:"email,omitempty" format:"email"`
		Site     *string   `json:"site,omitempty" format:"uri"`
		Born     string    `json:"born,omitzero" format:"date"`
		Seen     string    `json:"seen,omitempty" format:"date-time"`
		Age      int       `json:"age" minimum:"0" maximum:"150" default:"30"`
		Cups     uint8     `json:"cups,omitempty"`
		Ratio    float64   `json:"ratio,omitempty" minimum:"0.5" maximum:"2.5" default:"1.5"`
		Agree    bool      `json:"agree" default:"true"`
		NoTag    string    // named by its Go name, required
		Skipped  string    `json:"-"`
		internal string    //nolint:unused // unexported: not part of the form
		Extras   []string  `json:"extras,omitempty" enum:"milk|sugar" minItems:"1" maxItems:"2" default:"milk"`
		At       time.Time `json:"at,omitzero" title:"When"`
	}
	_ = Profile{}.internal
	same[Profile](t,
		elicit.String("name").Title("Your name").Description("as on the badge").MinLength(1).MaxLength(40).Default("Ada").Required(),
		elicit.String("email").Format(elicit.FormatEmail),
		elicit.String("site").Format(elicit.FormatURI),
		elicit.String("born").Format(elicit.FormatDate),
		elicit.String("seen").Format(elicit.FormatDateTime),
		elicit.Integer("age").Minimum(0).Maximum(150).Default(30).Required(),
		elicit.Integer("cups").Minimum(0),
		elicit.Number("ratio").Minimum(0.5).Maximum(2.5).Default(1.5),
		elicit.Boolean("agree").Default(true).Required(),
		elicit.String("NoTag").Required(),
		elicit.MultiEnum("extras", "milk", "sugar").MinItems(1).MaxItems(2).Default([]string{"milk"}),
		elicit.String("at").Title("When").Format(elicit.FormatDateTime),
	)
}

// Each of the five enum shapes of the specification is reachable from tags.
func TestFormOfFiveEnumShapes(t *testing.T) {
	t.Run("untitled single", func(t *testing.T) {
		type F struct {
			Size string `json:"size" enum:"s|m|l" default:"m"`
		}
		same[F](t, elicit.Enum("size", "s", "m", "l").Default("m").Required())
		if got := schemaJSON[F](t); !strings.Contains(got, `"enum":["s","m","l"]`) {
			t.Errorf("no enum: %s", got)
		}
	})
	t.Run("titled single", func(t *testing.T) {
		type F struct {
			Size string `json:"size" enum:"s=Small|m=Medium"`
		}
		same[F](t, elicit.TitledEnum("size", elicit.Option{Const: "s", Title: "Small"}, elicit.Option{Const: "m", Title: "Medium"}).Required())
		if got := schemaJSON[F](t); !strings.Contains(got, `"oneOf":[{"const":"s","title":"Small"}`) {
			t.Errorf("no oneOf: %s", got)
		}
	})
	t.Run("untitled multi", func(t *testing.T) {
		type F struct {
			Extras []string `json:"extras" enum:"milk|sugar"`
		}
		same[F](t, elicit.MultiEnum("extras", "milk", "sugar").Required())
		if got := schemaJSON[F](t); !strings.Contains(got, `"type":"array"`) || !strings.Contains(got, `"items":{"type":"string","enum":["milk","sugar"]}`) {
			t.Errorf("no items.enum: %s", got)
		}
	})
	t.Run("titled multi", func(t *testing.T) {
		type F struct {
			Extras []string `json:"extras,omitempty" enum:"milk=Milk|sugar=Sugar" default:"sugar"`
		}
		same[F](t, elicit.TitledMultiEnum("extras", elicit.Option{Const: "milk", Title: "Milk"}, elicit.Option{Const: "sugar", Title: "Sugar"}).Default([]string{"sugar"}))
		if got := schemaJSON[F](t); !strings.Contains(got, `"items":{"anyOf":[{"const":"milk","title":"Milk"}`) {
			t.Errorf("no items.anyOf: %s", got)
		}
	})
	t.Run("legacy enumNames", func(t *testing.T) {
		type F struct {
			Size string `json:"size" enum:"s|m" enumNames:"Small|Medium"`
		}
		same[F](t, elicit.LegacyEnum("size", []string{"s", "m"}, []string{"Small", "Medium"}).Required())
		if got := schemaJSON[F](t); !strings.Contains(got, `"enumNames":["Small","Medium"]`) {
			t.Errorf("no enumNames: %s", got)
		}
	})
}

// Every construction error names the offending property and Go field.
func TestFormOfErrors(t *testing.T) {
	type inner struct{ A string }
	type Embedded struct{ B string }
	cases := []struct {
		name  string
		infer func() (*elicit.Schema, error)
		want  []string
	}{
		{"nested struct", func() (*elicit.Schema, error) {
			type F struct {
				Addr inner `json:"addr"`
			}
			return schemaOf[F]()
		}, []string{`"addr"`, "field Addr", "nested struct"}},
		{"embedded struct", func() (*elicit.Schema, error) {
			type F struct {
				Embedded
			}
			return schemaOf[F]()
		}, []string{`"Embedded"`, "embedded"}},
		{"free slice", func() (*elicit.Schema, error) {
			type F struct {
				Tags []string `json:"tags"`
			}
			return schemaOf[F]()
		}, []string{`"tags"`, "field Tags", "[]string", "enum"}},
		{"slice of ints", func() (*elicit.Schema, error) {
			type F struct {
				N []int `json:"n" enum:"1|2"`
			}
			return schemaOf[F]()
		}, []string{`"n"`, "[]int"}},
		{"map", func() (*elicit.Schema, error) {
			type F struct {
				M map[string]string `json:"m"`
			}
			return schemaOf[F]()
		}, []string{`"m"`, "map[string]string"}},
		{"enum on an int", func() (*elicit.Schema, error) {
			type F struct {
				N int `json:"n" enum:"1|2"`
			}
			return schemaOf[F]()
		}, []string{`"n"`, "enum applies only"}},
		{"mixed enum", func() (*elicit.Schema, error) {
			type F struct {
				S string `json:"s" enum:"a|b=B"`
			}
			return schemaOf[F]()
		}, []string{`"s"`, "mixes"}},
		{"enumNames with titled", func() (*elicit.Schema, error) {
			type F struct {
				S string `json:"s" enum:"a=A" enumNames:"A"`
			}
			return schemaOf[F]()
		}, []string{`"s"`, "enumNames"}},
		{"enumNames length", func() (*elicit.Schema, error) {
			type F struct {
				S string `json:"s" enum:"a|b" enumNames:"A"`
			}
			return schemaOf[F]()
		}, []string{`"s"`, "enumNames has 1 entries"}},
		{"enumNames without enum", func() (*elicit.Schema, error) {
			type F struct {
				S string `json:"s" enumNames:"A"`
			}
			return schemaOf[F]()
		}, []string{`"s"`, "enumNames needs an enum"}},
		{"bad format", func() (*elicit.Schema, error) {
			type F struct {
				S string `json:"s" format:"phone"`
			}
			return schemaOf[F]()
		}, []string{`"s"`, "phone"}},
		{"format on a number", func() (*elicit.Schema, error) {
			type F struct {
				N float64 `json:"n" format:"email"`
			}
			return schemaOf[F]()
		}, []string{`"n"`, "format does not apply"}},
		{"bad length", func() (*elicit.Schema, error) {
			type F struct {
				S string `json:"s" minLength:"x"`
			}
			return schemaOf[F]()
		}, []string{`"s"`, "minLength", "not an integer"}},
		{"bad bound", func() (*elicit.Schema, error) {
			type F struct {
				N int `json:"n" maximum:"many"`
			}
			return schemaOf[F]()
		}, []string{`"n"`, "maximum", "not a number"}},
		{"inverted bounds", func() (*elicit.Schema, error) {
			type F struct {
				N int `json:"n" minimum:"5" maximum:"1"`
			}
			return schemaOf[F]()
		}, []string{`"n"`, "greater than maximum"}},
		{"default outside the enum", func() (*elicit.Schema, error) {
			type F struct {
				S string `json:"s" enum:"a|b" default:"c"`
			}
			return schemaOf[F]()
		}, []string{`"s"`, "not one of the options"}},
		{"bad bool default", func() (*elicit.Schema, error) {
			type F struct {
				B bool `json:"b" default:"maybe"`
			}
			return schemaOf[F]()
		}, []string{`"b"`, "not a boolean"}},
		{"fractional integer default", func() (*elicit.Schema, error) {
			type F struct {
				N int `json:"n" default:"1.5"`
			}
			return schemaOf[F]()
		}, []string{`"n"`, "default"}},
		{"duplicate name", func() (*elicit.Schema, error) {
			type F struct {
				A string `json:"X"`
				X string
			}
			return schemaOf[F]()
		}, []string{`"X"`, "duplicate"}},
		{"time as a date", func() (*elicit.Schema, error) {
			type F struct {
				At time.Time `json:"at" format:"date"`
			}
			return schemaOf[F]()
		}, []string{`"at"`, "date-time"}},
		{"not a struct", func() (*elicit.Schema, error) {
			return schemaOf[map[string]string]()
		}, []string{"struct"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := c.infer()
			if err == nil {
				b, _ := json.Marshal(s)
				t.Fatalf("no error; schema %s", b)
			}
			var se *elicit.SchemaError
			if !errors.As(err, &se) {
				t.Errorf("error %v is not a *SchemaError", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// Several bad fields are all reported at once.
func TestFormOfReportsEveryField(t *testing.T) {
	type F struct {
		A map[string]int `json:"a"`
		B []int          `json:"b"`
	}
	_, err := schemaOf[F]()
	if err == nil || !strings.Contains(err.Error(), `"a"`) || !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("want both fields named, got %v", err)
	}
}

// A form's answers decode into the struct, and are validated against the
// inferred schema on the way.
func TestFormDecode(t *testing.T) {
	type Order struct {
		Size   string    `json:"size" enum:"s=Small|l=Large"`
		Extras []string  `json:"extras,omitempty" enum:"milk|sugar"`
		Shots  *int      `json:"shots,omitempty" minimum:"1" maximum:"3"`
		Name   string    `json:"name" minLength:"1"`
		At     time.Time `json:"at,omitzero"`
	}
	form, err := elicit.FormOf[Order]()
	if err != nil {
		t.Fatal(err)
	}
	req := form.Request("Your order?")
	if err := req.Validate(); err != nil {
		t.Fatal(err)
	}
	res, err := req.CheckResult([]byte(`{"action":"accept","content":{"size":"l","extras":["milk"],"shots":2,"name":"Ada","at":"2026-07-28T10:00:00Z"}}`))
	if err != nil {
		t.Fatal(err)
	}
	o, err := form.Decode(res)
	if err != nil {
		t.Fatal(err)
	}
	if o.Size != "l" || len(o.Extras) != 1 || o.Extras[0] != "milk" || o.Shots == nil || *o.Shots != 2 || o.Name != "Ada" || !o.At.Equal(time.Date(2026, 7, 28, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("decoded %+v", o)
	}
	// The schema checks answers: a size outside the options is refused.
	if _, err := req.CheckResult([]byte(`{"action":"accept","content":{"size":"xl","name":"Ada"}}`)); err == nil {
		t.Error("an answer outside the enum was accepted")
	}
	if _, err := req.CheckResult([]byte(`{"action":"accept","content":{"size":"s"}}`)); err == nil {
		t.Error("an answer without the required name was accepted")
	}
	declined, err := req.CheckResult([]byte(`{"action":"decline"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := form.Decode(declined); !errors.Is(err, elicit.ErrNotAccepted) {
		t.Errorf("decline decoded with %v, want ErrNotAccepted", err)
	}
}
