package pysrc_test

import (
	"fmt"

	"github.com/lcptools/lcp/pysrc"
)

func ExampleReadFile() {
	src := []byte(`TOOL_LIBRARY_NAME = "Weather"

def tool_forecast(city: str, days: int = 3):
    """Forecast for a city.

    city: the city name
    """
`)
	f, err := pysrc.ReadFile("weather.py", src)
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Library.Name)
	for _, t := range f.Tools {
		b, _ := t.MarshalJSON()
		fmt.Println(string(b))
	}
	// Output:
	// Weather
	// {"name": "tool_forecast", "description": "Forecast for a city.", "input_schema": {"type": "object", "properties": {"city": {"type": "string", "description": "the city name"}, "days": {"type": "integer", "description": "Parameter 'days'", "default": 3}}, "required": ["city"]}}
}

func ExampleFallbackTools() {
	tools := pysrc.FallbackTools("def tool_broken(a, b=1):\n    return (\n")
	for _, t := range tools {
		fmt.Println(t.Name, t.Required, t.ParsedViaRegexFallback)
	}
	// Output:
	// tool_broken [a] true
}
