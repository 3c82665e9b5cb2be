package ecmaregex

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"unicode"
)

// charSet is what a class escape (\d, \s, \p{…}) stands for: either one of
// RE2's own Unicode classes, written \p{name} (or \P{name} when neg), or an
// explicit set of ranges for the sets RE2 has no name for.
type charSet struct {
	re2 string
	neg bool
	set runeSet
}

// negate returns the complement of c.
func (c charSet) negate() charSet {
	if c.re2 != "" {
		return charSet{re2: c.re2, neg: !c.neg}
	}
	return charSet{set: c.set.complement()}
}

// generalCategory returns the name of Go's table for a General_Category
// value or alias. Go's names and aliases are exactly those ECMA-262 accepts.
func generalCategory(name string) (string, bool) {
	name = cmp.Or(unicode.CategoryAliases[name], name)
	_, ok := unicode.Categories[name]
	return name, ok
}

// scriptAliases maps the ISO 15924 codes ECMA-262 accepts for Script to
// the long names Go's tables use. Long names are accepted as themselves.
var scriptAliases = map[string]string{
	"Adlm": "Adlam", "Aghb": "Caucasian_Albanian", "Ahom": "Ahom", "Arab": "Arabic",
	"Armi": "Imperial_Aramaic", "Armn": "Armenian", "Avst": "Avestan", "Bali": "Balinese",
	"Bamu": "Bamum", "Bass": "Bassa_Vah", "Batk": "Batak", "Beng": "Bengali",
	"Bhks": "Bhaiksuki", "Bopo": "Bopomofo", "Brah": "Brahmi", "Brai": "Braille",
	"Bugi": "Buginese", "Buhd": "Buhid", "Cakm": "Chakma", "Cans": "Canadian_Aboriginal",
	"Cari": "Carian", "Cham": "Cham", "Cher": "Cherokee", "Chrs": "Chorasmian",
	"Copt": "Coptic", "Qaac": "Coptic", "Cpmn": "Cypro_Minoan", "Cprt": "Cypriot",
	"Cyrl": "Cyrillic", "Deva": "Devanagari", "Diak": "Dives_Akuru", "Dogr": "Dogra",
	"Dsrt": "Deseret", "Dupl": "Duployan", "Egyp": "Egyptian_Hieroglyphs", "Elba": "Elbasan",
	"Elym": "Elymaic", "Ethi": "Ethiopic", "Geor": "Georgian", "Glag": "Glagolitic",
	"Gong": "Gunjala_Gondi", "Gonm": "Masaram_Gondi", "Goth": "Gothic", "Gran": "Grantha",
	"Grek": "Greek", "Gujr": "Gujarati", "Guru": "Gurmukhi", "Hang": "Hangul",
	"Hani": "Han", "Hano": "Hanunoo", "Hatr": "Hatran", "Hebr": "Hebrew",
	"Hira": "Hiragana", "Hluw": "Anatolian_Hieroglyphs", "Hmng": "Pahawh_Hmong",
	"Hmnp": "Nyiakeng_Puachue_Hmong", "Hung": "Old_Hungarian", "Ital": "Old_Italic",
	"Java": "Javanese", "Kali": "Kayah_Li", "Kana": "Katakana", "Kawi": "Kawi",
	"Khar": "Kharoshthi", "Khmr": "Khmer", "Khoj": "Khojki", "Kits": "Khitan_Small_Script",
	"Knda": "Kannada", "Kthi": "Kaithi", "Lana": "Tai_Tham", "Laoo": "Lao",
	"Latn": "Latin", "Lepc": "Lepcha", "Limb": "Limbu", "Lina": "Linear_A",
	"Linb": "Linear_B", "Lisu": "Lisu", "Lyci": "Lycian", "Lydi": "Lydian",
	"Mahj": "Mahajani", "Maka": "Makasar", "Mand": "Mandaic", "Mani": "Manichaean",
	"Marc": "Marchen", "Medf": "Medefaidrin", "Mend": "Mende_Kikakui", "Merc": "Meroitic_Cursive",
	"Mero": "Meroitic_Hieroglyphs", "Mlym": "Malayalam", "Modi": "Modi", "Mong": "Mongolian",
	"Mroo": "Mro", "Mtei": "Meetei_Mayek", "Mult": "Multani", "Mymr": "Myanmar",
	"Nagm": "Nag_Mundari", "Nand": "Nandinagari", "Narb": "Old_North_Arabian", "Nbat": "Nabataean",
	"Newa": "Newa", "Nkoo": "Nko", "Nshu": "Nushu", "Ogam": "Ogham",
	"Olck": "Ol_Chiki", "Orkh": "Old_Turkic", "Orya": "Oriya", "Osge": "Osage",
	"Osma": "Osmanya", "Ougr": "Old_Uyghur", "Palm": "Palmyrene", "Pauc": "Pau_Cin_Hau",
	"Perm": "Old_Permic", "Phag": "Phags_Pa", "Phli": "Inscriptional_Pahlavi", "Phlp": "Psalter_Pahlavi",
	"Phnx": "Phoenician", "Plrd": "Miao", "Prti": "Inscriptional_Parthian", "Rjng": "Rejang",
	"Rohg": "Hanifi_Rohingya", "Runr": "Runic", "Samr": "Samaritan", "Sarb": "Old_South_Arabian",
	"Saur": "Saurashtra", "Sgnw": "SignWriting", "Shaw": "Shavian", "Shrd": "Sharada",
	"Sidd": "Siddham", "Sind": "Khudawadi", "Sinh": "Sinhala", "Sogd": "Sogdian",
	"Sogo": "Old_Sogdian", "Sora": "Sora_Sompeng", "Soyo": "Soyombo", "Sund": "Sundanese",
	"Sylo": "Syloti_Nagri", "Syrc": "Syriac", "Tagb": "Tagbanwa", "Takr": "Takri",
	"Tale": "Tai_Le", "Talu": "New_Tai_Lue", "Taml": "Tamil", "Tang": "Tangut",
	"Tavt": "Tai_Viet", "Telu": "Telugu", "Tfng": "Tifinagh", "Tglg": "Tagalog",
	"Thaa": "Thaana", "Thai": "Thai", "Tibt": "Tibetan", "Tirh": "Tirhuta",
	"Tnsa": "Tangsa", "Toto": "Toto", "Ugar": "Ugaritic", "Vaii": "Vai",
	"Vith": "Vithkuqi", "Wara": "Warang_Citi", "Wcho": "Wancho", "Xpeo": "Old_Persian",
	"Xsux": "Cuneiform", "Yezi": "Yezidi", "Yiii": "Yi", "Zanb": "Zanabazar_Square",
	"Zinh": "Inherited", "Qaai": "Inherited", "Zyyy": "Common", "Zzzz": "Unknown",
	"Hrkt": "Katakana_Or_Hiragana",
}

// binaryAliases maps the short names of ECMA-262's binary properties to
// their long names.
var binaryAliases = map[string]string{
	"AHex": "ASCII_Hex_Digit", "Alpha": "Alphabetic", "Bidi_C": "Bidi_Control",
	"Bidi_M": "Bidi_Mirrored", "CI": "Case_Ignorable", "CWCF": "Changes_When_Casefolded",
	"CWCM": "Changes_When_Casemapped", "CWKCF": "Changes_When_NFKC_Casefolded",
	"CWL": "Changes_When_Lowercased", "CWT": "Changes_When_Titlecased",
	"CWU": "Changes_When_Uppercased", "DI": "Default_Ignorable_Code_Point",
	"Dep": "Deprecated", "Dia": "Diacritic", "EBase": "Emoji_Modifier_Base",
	"EComp": "Emoji_Component", "EMod": "Emoji_Modifier", "EPres": "Emoji_Presentation",
	"Ext": "Extender", "ExtPict": "Extended_Pictographic", "Gr_Base": "Grapheme_Base",
	"Gr_Ext": "Grapheme_Extend", "Hex": "Hex_Digit", "IDC": "ID_Continue",
	"IDS": "ID_Start", "IDSB": "IDS_Binary_Operator", "IDST": "IDS_Trinary_Operator",
	"Ideo": "Ideographic", "Join_C": "Join_Control", "LOE": "Logical_Order_Exception",
	"Lower": "Lowercase", "NChar": "Noncharacter_Code_Point", "Pat_Syn": "Pattern_Syntax",
	"Pat_WS": "Pattern_White_Space", "QMark": "Quotation_Mark", "RI": "Regional_Indicator",
	"SD": "Soft_Dotted", "STerm": "Sentence_Terminal", "Term": "Terminal_Punctuation",
	"UIdeo": "Unified_Ideograph", "Upper": "Uppercase", "VS": "Variation_Selector",
	"space": "White_Space", "XIDC": "XID_Continue", "XIDS": "XID_Start",
}

// unsupportedBinary lists binary properties ECMA-262 defines whose data Go's
// Unicode tables do not carry. They are valid syntax but cannot be compiled.
var unsupportedBinary = map[string]bool{
	"Bidi_Mirrored": true, "Case_Ignorable": true, "Changes_When_Casefolded": true,
	"Changes_When_Casemapped": true, "Changes_When_Lowercased": true,
	"Changes_When_NFKC_Casefolded": true, "Changes_When_Titlecased": true,
	"Changes_When_Uppercased": true, "Emoji": true, "Emoji_Component": true,
	"Emoji_Modifier": true, "Emoji_Modifier_Base": true, "Emoji_Presentation": true,
	"Extended_Pictographic": true, "XID_Continue": true, "XID_Start": true,
}

// derivedBinary holds the binary properties Go's tables do not carry as
// such, derived as UAX #44 and UAX #31 derive them: the code points in one
// of in and in none of out.
var derivedBinary = map[string]struct{ in, out []*unicode.RangeTable }{
	"ASCII":           {in: tables(&unicode.RangeTable{R16: []unicode.Range16{{0, 0x7f, 1}}})},
	"Any":             {in: tables(anyRune)},
	"Assigned":        {in: tables(anyRune), out: tables(unicode.Cn)},
	"Alphabetic":      {in: tables(unicode.L, unicode.Nl, unicode.Other_Alphabetic)},
	"Lowercase":       {in: tables(unicode.Ll, unicode.Other_Lowercase)},
	"Uppercase":       {in: tables(unicode.Lu, unicode.Other_Uppercase)},
	"Cased":           {in: tables(unicode.Ll, unicode.Other_Lowercase, unicode.Lu, unicode.Other_Uppercase, unicode.Lt)},
	"Math":            {in: tables(unicode.Sm, unicode.Other_Math)},
	"Grapheme_Extend": {in: tables(unicode.Me, unicode.Mn, unicode.Other_Grapheme_Extend)},
	"Grapheme_Base": {in: tables(anyRune), out: tables(unicode.Cc, unicode.Cf, unicode.Cs, unicode.Co, unicode.Cn,
		unicode.Zl, unicode.Zp, unicode.Me, unicode.Mn, unicode.Other_Grapheme_Extend)},
	"Default_Ignorable_Code_Point": {
		in: tables(unicode.Other_Default_Ignorable_Code_Point, unicode.Cf, unicode.Variation_Selector),
		out: tables(unicode.White_Space, unicode.Prepended_Concatenation_Mark, &unicode.RangeTable{
			R16: []unicode.Range16{{0xfff9, 0xfffb, 1}}, R32: []unicode.Range32{{0x13430, 0x1343f, 1}}}),
	},
	"ID_Start":    {in: idStart, out: patternChars},
	"ID_Continue": {in: idContinue, out: patternChars},
}

// The tables of ID_Start and ID_Continue (identifierChar uses them too).
var (
	idStart      = tables(unicode.L, unicode.Nl, unicode.Other_ID_Start)
	idContinue   = slices.Concat(idStart, tables(unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc, unicode.Other_ID_Continue))
	patternChars = tables(unicode.Pattern_Syntax, unicode.Pattern_White_Space)
	anyRune      = &unicode.RangeTable{R32: []unicode.Range32{{0, unicode.MaxRune, 1}}} // for tableSet only
)

func tables(ts ...*unicode.RangeTable) []*unicode.RangeTable { return ts }

// binaryProperty returns the set of a supported binary property, or false.
func binaryProperty(name string) (runeSet, bool) {
	if d, ok := derivedBinary[name]; ok {
		return tableSet(d.in...).minus(tableSet(d.out...)), true
	}
	if t, ok := unicode.Properties[name]; ok && !strings.HasPrefix(name, "Other_") &&
		name != "STerm" && name != "Hyphen" && name != "Prepended_Concatenation_Mark" {
		return tableSet(t), true
	}
	return nil, false
}

// lookupProperty resolves the body of \p{body}. A name ECMA-262 does not
// define is a syntax error; one it defines but Go's Unicode tables cannot
// serve is recorded as unsupported.
func (p *parser) lookupProperty(body string) (charSet, error) {
	name, value, hasValue := strings.Cut(body, "=")
	if !hasValue {
		if gc, ok := generalCategory(name); ok {
			return charSet{re2: gc}, nil
		}
		long := cmp.Or(binaryAliases[name], name)
		if unsupportedBinary[long] {
			p.unsupportedf("unicode property %s (Go's tables do not carry it)", name)
			return charSet{}, nil
		}
		if set, ok := binaryProperty(long); ok {
			return charSet{set: set}, nil
		}
		return charSet{}, p.errorf("invalid property name %q", body)
	}
	switch name {
	case "General_Category", "gc":
		if gc, ok := generalCategory(value); ok {
			return charSet{re2: gc}, nil
		}
	case "Script", "sc", "Script_Extensions", "scx":
		long := cmp.Or(scriptAliases[value], value)
		if _, inGo := unicode.Scripts[long]; !inGo && long != "Unknown" && long != "Katakana_Or_Hiragana" {
			break
		}
		if name == "Script_Extensions" || name == "scx" {
			p.unsupportedf("unicode property %s (Go's tables have no Script_Extensions; use Script=)", body)
			return charSet{}, nil
		}
		switch long {
		case "Unknown":
			return charSet{set: tableSet(slices.Collect(maps.Values(unicode.Scripts))...).complement()}, nil
		case "Katakana_Or_Hiragana":
			return charSet{set: nil}, nil // no code point has this Script value
		}
		return charSet{re2: long}, nil
	}
	return charSet{}, p.errorf("invalid property name %q", body)
}
