package jsonlogic

import "testing"

// The cases below are the examples of https://jsonlogic.com/operations.html and
// https://jsonlogic.com/truthy.html, and cases from json-logic-js's tests, with
// results as json-logic-js gives them (save the documented deviations).

func TestSpecVar(t *testing.T) {
	runSpec(t, []specCase{
		{`{"var":["a"]}`, `{"a":1,"b":2}`, `1`},
		{`{"var":"a"}`, `{"a":1,"b":2}`, `1`},
		{`{"var":["z",26]}`, `{"a":1,"b":2}`, `26`},
		{`{"var":["a",26]}`, `{"a":1,"b":2}`, `1`},
		{`{"var":"champ.name"}`, `{"champ":{"name":"Fezzig","height":223},"challenger":{"name":"Dread Pirate Roberts","height":183}}`, `"Fezzig"`},
		{`{"var":1}`, `["zero","one","two"]`, `"one"`},
		{`{"var":"1"}`, `["zero","one","two"]`, `"one"`},
		{`{"var":"01"}`, `["zero","one","two"]`, `null`},
		{`{"var":"3"}`, `["zero","one","two"]`, `null`},
		{`{"var":"a.1.b"}`, `{"a":[{"b":1},{"b":2}]}`, `2`},
		{`{"and":[{"<":[{"var":"temp"},110]},{"==":[{"var":"pie.filling"},"apple"]}]}`, `{"temp":100,"pie":{"filling":"apple"}}`, `true`},
		{`{"cat":["Hello, ",{"var":""}]}`, `"Dolly"`, `"Hello, Dolly"`},
		{`{"var":""}`, `{"a":1}`, `{"a":1}`},
		{`{"var":[]}`, `[1,2]`, `[1,2]`},
		{`{"var":null}`, `3`, `3`},
		{`{"var":["",5]}`, `null`, `null`},
		{`{"var":"a"}`, `null`, `null`},
		{`{"var":["a.b","d"]}`, `{"a":null}`, `"d"`},
		{`{"var":["a","d"]}`, `{"a":null}`, `null`}, // found, and null: the default is for absent values
		{`{"var":["a.b","d"]}`, `{"a":"string"}`, `"d"`},
		{`{"var":["a.b",{"cat":["x",{"var":"c"}]}]}`, `{"c":"y"}`, `"xy"`},
		{`{"var":"a.b.c"}`, `{"a":{"b":{"c":false}}}`, `false`},
		{`{"var":"x"}`, `{"x":[]}`, `[]`},
	})
}

func TestSpecMissing(t *testing.T) {
	runSpec(t, []specCase{
		{`{"missing":["a","b"]}`, `{"a":"apple","c":"carrot"}`, `["b"]`},
		{`{"missing":["a","b"]}`, `{"a":"apple","b":"banana"}`, `[]`},
		{`{"if":[{"missing":["a","b"]},"Not enough fruit","OK to proceed"]}`, `{"a":"apple","b":"banana"}`, `"OK to proceed"`},
		{`{"missing":[]}`, ``, `[]`},
		{`{"missing":"a"}`, ``, `["a"]`},
		{`{"missing":"a"}`, `{"a":"apple"}`, `[]`},
		{`{"missing":["a","b"]}`, `{}`, `["a","b"]`},
		{`{"missing":["a.b"]}`, `{"a":{"c":"apple cake"}}`, `["a.b"]`},
		{`{"missing":["a.b","a.c"]}`, `{"a":{"b":"apple brownie"}}`, `["a.c"]`},
		{`{"missing":["a","b","c"]}`, `{"a":null,"b":"","c":0}`, `["a","b"]`},
		{`{"missing":[0,1]}`, `["x"]`, `[1]`},
		{`{"missing":{"merge":["vin",{"if":[{"var":"financing"},["apr","term"],[]]}]}}`, `{"financing":true}`, `["vin","apr","term"]`},
		{`{"missing":{"merge":["vin",{"if":[{"var":"financing"},["apr"],[]]}]}}`, `{"financing":false}`, `["vin"]`},
		{`{"missing":[["a","b"],"c"]}`, `{}`, `["a","b"]`},
		{`{"missing":[{"var":"k"}]}`, `{"k":"z"}`, `["z"]`},
		{`{"missing_some":[1,["a","b","c"]]}`, `{"a":"apple"}`, `[]`},
		{`{"missing_some":[2,["a","b","c"]]}`, `{"a":"apple"}`, `["b","c"]`},
		{`{"missing_some":[0,["a"]]}`, `{}`, `[]`},
		{`{"missing_some":[1,"a"]}`, `{}`, `["a"]`},
		{`{"if":[{"merge":[{"missing":["first_name","last_name"]},{"missing_some":[1,["cell_phone","home_phone"]]}]},"We require first name, last name, and one phone number.","OK to proceed"]}`,
			`{"first_name":"Bruce","last_name":"Wayne"}`, `"We require first name, last name, and one phone number."`},
		{`{"if":[{"merge":[{"missing":["first_name","last_name"]},{"missing_some":[1,["cell_phone","home_phone"]]}]},"We require first name, last name, and one phone number.","OK to proceed"]}`,
			`{"first_name":"Bruce","last_name":"Wayne","cell_phone":"555"}`, `"OK to proceed"`},
	})
}

func TestSpecIf(t *testing.T) {
	runSpec(t, []specCase{
		{`{"if":[true,"yes","no"]}`, ``, `"yes"`},
		{`{"if":[false,"yes","no"]}`, ``, `"no"`},
		{`{"if":[{"<":[{"var":"temp"},0]},"freezing",{"<":[{"var":"temp"},100]},"liquid","gas"]}`, `{"temp":55}`, `"liquid"`},
		{`{"if":[{"<":[{"var":"temp"},0]},"freezing",{"<":[{"var":"temp"},100]},"liquid","gas"]}`, `{"temp":-5}`, `"freezing"`},
		{`{"if":[{"<":[{"var":"temp"},0]},"freezing",{"<":[{"var":"temp"},100]},"liquid","gas"]}`, `{"temp":150}`, `"gas"`},
		{`{"?:":[true,1,2]}`, ``, `1`},
		{`{"if":[]}`, ``, `null`},
		{`{"if":[true]}`, ``, `true`},
		{`{"if":["apple"]}`, ``, `"apple"`},
		{`{"if":[false,"apple"]}`, ``, `null`},
		{`{"if":[false,"apple",false,"banana"]}`, ``, `null`},
		{`{"if":[false,"apple",true,"banana","carrot"]}`, ``, `"banana"`},
		{`{"if":[false,"apple",false,"banana",false,"carrot","date"]}`, ``, `"date"`},
		{`{"if":[[],"apple","banana"]}`, ``, `"banana"`},
		{`{"if":[[1],"apple","banana"]}`, ``, `"apple"`},
		{`{"if":["","apple","banana"]}`, ``, `"banana"`},
		{`{"if":["0","apple","banana"]}`, ``, `"apple"`},
		{`{"if":[{"+":"0"},"apple","banana"]}`, ``, `"banana"`},
		{`{"if":[0,"apple","banana"]}`, ``, `"banana"`},
		{`{"if":[-1,"apple","banana"]}`, ``, `"apple"`},
		{`{"if":[3.1416,"apple","banana"]}`, ``, `"apple"`},
		{`{"if":[{"cat":["ap","ple"]},{"cat":["ba","na","na"]},"x"]}`, ``, `"banana"`},
	})
	fizzbuzz := `{"if":[{"==":[{"%":[{"var":"i"},15]},0]},"fizzbuzz",{"==":[{"%":[{"var":"i"},3]},0]},"fizz",{"==":[{"%":[{"var":"i"},5]},0]},"buzz",{"var":"i"}]}`
	runSpec(t, []specCase{
		{fizzbuzz, `{"i":1}`, `1`}, {fizzbuzz, `{"i":3}`, `"fizz"`}, {fizzbuzz, `{"i":5}`, `"buzz"`}, {fizzbuzz, `{"i":30}`, `"fizzbuzz"`},
	})
}

func TestSpecTruthiness(t *testing.T) {
	runSpec(t, []specCase{
		{`{"!!":[0]}`, ``, `false`},
		{`{"!!":[1]}`, ``, `true`},
		{`{"!!":[-1]}`, ``, `true`},
		{`{"!!":[[]]}`, ``, `false`},
		{`{"!!":[[1,2]]}`, ``, `true`},
		{`{"!!":[""]}`, ``, `false`},
		{`{"!!":["anything"]}`, ``, `true`},
		{`{"!!":["0"]}`, ``, `true`},
		{`{"!!":[null]}`, ``, `false`},
		{`{"!!":[false]}`, ``, `false`},
		{`{"!!":{"var":"o"}}`, `{"o":{}}`, `true`},
		{`{"!!":{"var":"n"}}`, `{"n":0.0}`, `false`},
		{`{"!":[true]}`, ``, `false`},
		{`{"!":true}`, ``, `false`},
		{`{"!":[[]]}`, ``, `true`},
		{`{"!":{"var":"missing"}}`, `{}`, `true`},
	})
}

func TestSpecAndOr(t *testing.T) {
	runSpec(t, []specCase{
		{`{"or":[true,false]}`, ``, `true`},
		{`{"or":[false,true]}`, ``, `true`},
		{`{"or":[false,"a"]}`, ``, `"a"`},
		{`{"or":[false,0,"a"]}`, ``, `"a"`},
		{`{"or":[false,0]}`, ``, `0`},
		{`{"or":[[],""]}`, ``, `""`},
		{`{"or":[{"var":"x"},"default"]}`, `{"x":"set"}`, `"set"`},
		{`{"and":[true,true]}`, ``, `true`},
		{`{"and":[true,false]}`, ``, `false`},
		{`{"and":[true,"a",3]}`, ``, `3`},
		{`{"and":[true,"",3]}`, ``, `""`},
		{`{"and":[[],true]}`, ``, `[]`},
		{`{"and":[1]}`, ``, `1`},
		{`{"and":{"var":"x"}}`, `{"x":"only"}`, `"only"`},
	})
}

func TestSpecEquality(t *testing.T) {
	runSpec(t, []specCase{
		{`{"==":[1,1]}`, ``, `true`},
		{`{"==":[1,"1"]}`, ``, `true`},
		{`{"==":[0,false]}`, ``, `true`},
		{`{"==":[1,true]}`, ``, `true`},
		{`{"==":["1",true]}`, ``, `true`},
		{`{"==":["",0]}`, ``, `true`},
		{`{"==":[" 12 ",12]}`, ``, `true`},
		{`{"==":["0x10",16]}`, ``, `true`},
		{`{"==":["1e3",1000]}`, ``, `true`},
		{`{"==":["abc",0]}`, ``, `false`},
		{`{"==":[null,null]}`, ``, `true`},
		{`{"==":[null,0]}`, ``, `false`},
		{`{"==":[null,false]}`, ``, `false`},
		{`{"==":[null,""]}`, ``, `false`},
		{`{"==":[[1],1]}`, ``, `true`},
		{`{"==":[[],""]}`, ``, `true`},
		{`{"==":[[],false]}`, ``, `true`},
		{`{"==":[[1,2],"1,2"]}`, ``, `true`},
		{`{"==":[[1],[1]]}`, ``, `false`},
		{`{"==":["a","a"]}`, ``, `true`},
		{`{"==":["a","b"]}`, ``, `false`},
		{`{"==":[{"var":"v"},2]}`, `{"v":2.0}`, `true`},
		{`{"==":[{"var":"v"},"2"]}`, `{"v":2}`, `true`},
		{`{"==":[{"var":"a"},{"var":"b"}]}`, `{"a":10,"b":1e1}`, `true`},
		{`{"===":[1,1]}`, ``, `true`},
		{`{"===":[1,"1"]}`, ``, `false`},
		{`{"===":[0,{"+":"0"}]}`, ``, `true`},
		{`{"===":[null,null]}`, ``, `true`},
		{`{"===":[[],[]]}`, ``, `false`},
		{`{"===":[{"var":"v"},1]}`, `{"v":1.0}`, `true`},
		{`{"!=":[1,2]}`, ``, `true`},
		{`{"!=":[1,"1"]}`, ``, `false`},
		{`{"!=":[null,0]}`, ``, `true`},
		{`{"!==":[1,2]}`, ``, `true`},
		{`{"!==":[1,"1"]}`, ``, `true`},
		{`{"!==":[1,1]}`, ``, `false`},
	})
}

func TestSpecComparison(t *testing.T) {
	runSpec(t, []specCase{
		{`{">":[2,1]}`, ``, `true`},
		{`{">":[1,1]}`, ``, `false`},
		{`{">=":[1,1]}`, ``, `true`},
		{`{">=":[0,1]}`, ``, `false`},
		{`{"<":[1,2]}`, ``, `true`},
		{`{"<":[2,1]}`, ``, `false`},
		{`{"<=":[1,1]}`, ``, `true`},
		{`{"<=":[2,1]}`, ``, `false`},
		{`{"<":[1,2,3]}`, ``, `true`},
		{`{"<":[1,1,3]}`, ``, `false`},
		{`{"<":[1,4,3]}`, ``, `false`},
		{`{"<=":[1,1,3]}`, ``, `true`},
		{`{"<=":[1,4,3]}`, ``, `false`},
		{`{"<":[0,{"var":"temp"},100]}`, `{"temp":37}`, `true`},
		{`{"<":[0,{"var":"temp"},100]}`, `{"temp":100}`, `false`},
		{`{"<=":[0,{"var":"temp"},100]}`, `{"temp":100}`, `true`},
		{`{">":["b","a"]}`, ``, `true`},
		{`{"<":["B","a"]}`, ``, `true`},
		{`{"<":["10","9"]}`, ``, `true`}, // two strings compare as strings
		{`{"<":["10",9]}`, ``, `false`},  // otherwise as numbers
		{`{"<":[{"var":"missing"},1]}`, `{}`, `true`},
		{`{">":[{"var":"missing"},-1]}`, `{}`, `true`},
		{`{"<":["abc",1]}`, ``, `false`},
		{`{">=":["abc",1]}`, ``, `false`},
		{`{"<":[false,true]}`, ``, `true`},
		{`{">":[[2],1]}`, ``, `true`},
		{`{">":[{"var":"payload.version"},1]}`, `{"payload":{"version":2}}`, `true`},
		{`{">=":[{"var":"s"},"2024-01-01"]}`, `{"s":"2024-06-30T12:00:00Z"}`, `true`},
	})
}

func TestSpecArithmetic(t *testing.T) {
	runSpec(t, []specCase{
		{`{"max":[1,2,3]}`, ``, `3`},
		{`{"min":[1,2,3]}`, ``, `1`},
		{`{"max":["7",2]}`, ``, `7`},
		{`{"min":[1,"x"]}`, ``, `null`},
		{`{"min":[]}`, ``, `null`},
		{`{"max":[null,-1]}`, ``, `0`},
		{`{"+":[4,2]}`, ``, `6`},
		{`{"-":[4,2]}`, ``, `2`},
		{`{"*":[4,2]}`, ``, `8`},
		{`{"/":[4,2]}`, ``, `2`},
		{`{"+":[2,2,2,2,2]}`, ``, `10`},
		{`{"*":[2,2,2,2,2]}`, ``, `32`},
		{`{"-":2}`, ``, `-2`},
		{`{"-":-2}`, ``, `2`},
		{`{"+":"3.14"}`, ``, `3.14`},
		{`{"%":[101,2]}`, ``, `1`},
		{`{"%":[-7,2]}`, ``, `-1`},
		{`{"+":[]}`, ``, `0`},
		{`{"+":["2","3px"]}`, ``, `5`}, // parseFloat takes the leading number
		{`{"+":[1,null]}`, ``, `null`},
		{`{"+":[1,true]}`, ``, `null`},
		{`{"-":["10","4"]}`, ``, `6`},
		{`{"-":[10,null]}`, ``, `10`},
		{`{"-":["3px",1]}`, ``, `null`},
		{`{"-":[0]}`, ``, `0`},
		{`{"*":["2"]}`, ``, `2`},
		{`{"*":[0.1,3]}`, ``, `0.30000000000000004`},
		{`{"/":[1,0]}`, ``, `null`},
		{`{"/":[0,0]}`, ``, `null`},
		{`{"%":[1,0]}`, ``, `null`},
		{`{"/":[1,4]}`, ``, `0.25`},
		{`{"+":[{"var":"a"},{"var":"b"}]}`, `{"a":1.5,"b":2}`, `3.5`},
	})
}

func TestSpecStrings(t *testing.T) {
	runSpec(t, []specCase{
		{`{"in":["Spring","Springfield"]}`, ``, `true`},
		{`{"in":["Summer","Springfield"]}`, ``, `false`},
		{`{"in":["",""]}`, ``, `false`},
		{`{"in":["","a"]}`, ``, `true`},
		{`{"in":[1,"a1"]}`, ``, `true`},
		{`{"in":["a",5]}`, ``, `false`},
		{`{"in":["a",null]}`, ``, `false`},
		{`{"cat":["I love"," pie"]}`, ``, `"I love pie"`},
		{`{"cat":["I love ",{"var":"filling"}," pie"]}`, `{"filling":"apple","temp":110}`, `"I love apple pie"`},
		{`{"cat":[]}`, ``, `""`},
		{`{"cat":"solo"}`, ``, `"solo"`},
		{`{"cat":[1,2.5,true,null,[1,[2,3]],{"var":"o"}]}`, `{"o":{}}`, `"12.5true1,2,3[object Object]"`},
		{`{"cat":[1e21,1e-7,0.000001,123456789012345680000]}`, ``, `"1e+211e-70.000001123456789012345680000"`},
		{`{"substr":["jsonlogic",4]}`, ``, `"logic"`},
		{`{"substr":["jsonlogic",-5]}`, ``, `"logic"`},
		{`{"substr":["jsonlogic",1,3]}`, ``, `"son"`},
		{`{"substr":["jsonlogic",4,-2]}`, ``, `"log"`},
		{`{"substr":["jsonlogic",0,1]}`, ``, `"j"`},
		{`{"substr":["jsonlogic",-1,1]}`, ``, `"c"`},
		{`{"substr":["jsonlogic",-5,-2]}`, ``, `"log"`},
		{`{"substr":["jsonlogic",1,-5]}`, ``, `"son"`},
		{`{"substr":["jsonlogic",20]}`, ``, `""`},
		{`{"substr":["jsonlogic",-20,2]}`, ``, `"js"`},
		{`{"substr":["jsonlogic",2,-20]}`, ``, `""`},
		{`{"substr":["jsonlogic","x"]}`, ``, `"jsonlogic"`},
		{`{"substr":["héllo wörld",1,4]}`, ``, `"éllo"`},
		{`{"substr":[12345,1,2]}`, ``, `"23"`},
	})
}

func TestSpecArrays(t *testing.T) {
	runSpec(t, []specCase{
		{`{"in":["Ringo",["John","Paul","George","Ringo"]]}`, ``, `true`},
		{`{"in":["Yoko",["John","Paul","George","Ringo"]]}`, ``, `false`},
		{`{"in":["1",[1,2]]}`, ``, `false`}, // membership is strict
		{`{"in":[{"var":"type"},["a.created","b.created"]]}`, `{"type":"b.created"}`, `true`},
		{`{"in":["x",{"var":"tags"}]}`, `{"tags":["w","x"]}`, `true`},
		{`{"in":[2,{"var":"nums"}]}`, `{"nums":[1,2]}`, `true`},
		{`{"all":[[1,2,3],{">":[{"var":""},0]}]}`, ``, `true`},
		{`{"all":[[1,2,-3],{">":[{"var":""},0]}]}`, ``, `false`},
		{`{"all":[[],{">":[{"var":""},0]}]}`, ``, `false`},
		{`{"some":[[-1,0,1],{">":[{"var":""},0]}]}`, ``, `true`},
		{`{"some":[[-1,0],{">":[{"var":""},0]}]}`, ``, `false`},
		{`{"some":[[],true]}`, ``, `false`},
		{`{"some":["abc",true]}`, ``, `false`},
		{`{"none":[[-3,-2,-1],{">":[{"var":""},0]}]}`, ``, `true`},
		{`{"none":[[-3,2],{">":[{"var":""},0]}]}`, ``, `false`},
		{`{"none":[[],true]}`, ``, `true`},
		{`{"none":[{"var":"nope"},true]}`, `{}`, `true`},
		{`{"some":[{"var":"pies"},{"==":[{"var":"filling"},"apple"]}]}`,
			`{"pies":[{"filling":"pumpkin","temp":110},{"filling":"rhubarb","temp":210},{"filling":"apple","temp":310}]}`, `true`},
		{`{"all":[{"var":"pies"},{"<":[{"var":"temp"},300]}]}`,
			`{"pies":[{"filling":"pumpkin","temp":110},{"filling":"rhubarb","temp":210},{"filling":"apple","temp":310}]}`, `false`},
		{`{"some":[{"var":"a"},{"some":[{"var":"b"},{"==":[{"var":""},3]}]}]}`, `{"a":[{"b":[1,2]},{"b":[3]}]}`, `true`},
		{`{"map":[{"var":"integers"},{"*":[{"var":""},2]}]}`, `{"integers":[1,2,3,4,5]}`, `[2,4,6,8,10]`},
		{`{"map":[{"var":"nope"},{"var":""}]}`, `{}`, `[]`},
		{`{"filter":[{"var":"integers"},{"%":[{"var":""},2]}]}`, `{"integers":[1,2,3,4,5]}`, `[1,3,5]`},
		{`{"filter":[[0,1,""],{"var":""}]}`, ``, `[1]`},
		{`{"merge":[[1,2],[3,4]]}`, ``, `[1,2,3,4]`},
		{`{"merge":[1,2,[3,4]]}`, ``, `[1,2,3,4]`},
		{`{"merge":[[1],[[2]]]}`, ``, `[1,[2]]`},
		{`{"merge":[]}`, ``, `[]`},
		{`{"merge":1}`, ``, `[1]`},
		{`[1,{"var":"a"},[2]]`, `{"a":"x"}`, `[1,"x",[2]]`},
	})
}

// The envelope a subscription filter sees, as in the package's motivating example.
func TestEnvelopeFilter(t *testing.T) {
	rule := `{"and":[{"==":[{"var":"type"},"hypothesis.created"]},{">":[{"var":"payload.version"},1]}]}`
	runSpec(t, []specCase{
		{rule, `{"type":"hypothesis.created","payload":{"version":2}}`, `true`},
		{rule, `{"type":"hypothesis.created","payload":{"version":1}}`, `false`},
		{rule, `{"type":"hypothesis.created","payload":{}}`, `false`},
		{rule, `{"type":"hypothesis.created"}`, `false`},
		{rule, `{"type":"paper.created","payload":{"version":2}}`, `false`},
		{rule, `{"type":"hypothesis.created","payload":{"version":"3"}}`, `true`},
		{rule, `null`, `false`},
		{rule, `[]`, `false`},
	})
}

func TestLiteralFilters(t *testing.T) {
	runSpec(t, []specCase{
		{`true`, ``, `true`},
		{`false`, ``, `false`},
		{`"0"`, ``, `"0"`},
		{`0`, ``, `0`},
		{`[]`, ``, `[]`},
		{`[{"var":""}]`, `7`, `[7]`},
		{`1e-400`, ``, `0`}, // underflows to 0, as in JavaScript
	})
}
