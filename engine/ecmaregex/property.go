package ecmaregex

import (
	"errors"
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

// errUnknownProperty marks a \p{…} that ECMA-262 does not define.
var errUnknownProperty = errors.New("unknown unicode property")

// generalCategory returns the name of Go's table for a General_Category
// value or alias. Go's names and aliases are exactly those ECMA-262 accepts.
func generalCategory(name string) (string, bool) {
	if short, ok := unicode.CategoryAliases[name]; ok {
		return short, true
	}
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

// binaryProperty returns the set of a supported binary property, or false.
func binaryProperty(name string) (runeSet, bool) {
	cat := func(n string) runeSet { return tableSet(unicode.Categories[n]) }
	prop := func(n string) runeSet { return tableSet(unicode.Properties[n]) }
	switch name {
	case "ASCII":
		return setOf(runeRange{0, 0x7f}), true
	case "Any":
		return setOf(runeRange{0, unicode.MaxRune}), true
	case "Assigned":
		return cat("Cn").complement(), true
	case "Alphabetic":
		return union(cat("L"), cat("Nl"), prop("Other_Alphabetic")), true
	case "Lowercase":
		return union(cat("Ll"), prop("Other_Lowercase")), true
	case "Uppercase":
		return union(cat("Lu"), prop("Other_Uppercase")), true
	case "Cased":
		return union(cat("Ll"), prop("Other_Lowercase"), cat("Lu"), prop("Other_Uppercase"), cat("Lt")), true
	case "Math":
		return union(cat("Sm"), prop("Other_Math")), true
	case "Default_Ignorable_Code_Point":
		return defaultIgnorable(), true
	case "Grapheme_Extend":
		return union(cat("Me"), cat("Mn"), prop("Other_Grapheme_Extend")), true
	case "Grapheme_Base":
		excluded := union(cat("Cc"), cat("Cf"), cat("Cs"), cat("Co"), cat("Cn"), cat("Zl"), cat("Zp"),
			cat("Me"), cat("Mn"), prop("Other_Grapheme_Extend"))
		return excluded.complement(), true
	case "ID_Start":
		return idStart(), true
	case "ID_Continue":
		return idContinue(), true
	}
	if t, ok := unicode.Properties[name]; ok && !strings.HasPrefix(name, "Other_") &&
		name != "STerm" && name != "Hyphen" && name != "Prepended_Concatenation_Mark" {
		return tableSet(t), true
	}
	return nil, false
}

// defaultIgnorable derives Default_Ignorable_Code_Point as UAX #44 does.
func defaultIgnorable() runeSet {
	in := union(tableSet(unicode.Other_Default_Ignorable_Code_Point), tableSet(unicode.Cf),
		tableSet(unicode.Variation_Selector))
	out := union(tableSet(unicode.White_Space), setOf(runeRange{0xfff9, 0xfffb}, runeRange{0x13430, 0x1343f}),
		tableSet(unicode.Prepended_Concatenation_Mark))
	return in.minus(out)
}

// idStart derives ID_Start as UAX #31 does.
func idStart() runeSet {
	in := union(tableSet(unicode.L), tableSet(unicode.Nl), tableSet(unicode.Other_ID_Start))
	return in.minus(union(tableSet(unicode.Pattern_Syntax), tableSet(unicode.Pattern_White_Space)))
}

// idContinue derives ID_Continue as UAX #31 does.
func idContinue() runeSet {
	in := union(idStart(), tableSet(unicode.Mn), tableSet(unicode.Mc), tableSet(unicode.Nd),
		tableSet(unicode.Pc), tableSet(unicode.Other_ID_Continue))
	return in.minus(union(tableSet(unicode.Pattern_Syntax), tableSet(unicode.Pattern_White_Space)))
}

// lookupProperty resolves the body of \p{body}. It wraps errUnknownProperty
// for names ECMA-262 does not define and ErrUnsupported for names it defines
// but Go's Unicode tables cannot serve.
func lookupProperty(body string) (charSet, error) {
	name, value, hasValue := strings.Cut(body, "=")
	if !hasValue {
		if gc, ok := generalCategory(name); ok {
			return charSet{re2: gc}, nil
		}
		long := name
		if l, ok := binaryAliases[name]; ok {
			long = l
		}
		if unsupportedBinary[long] {
			return charSet{}, unsupportedf("unicode property %s (Go's tables do not carry it)", name)
		}
		if set, ok := binaryProperty(long); ok {
			return charSet{set: set}, nil
		}
		return charSet{}, errUnknownProperty
	}
	switch name {
	case "General_Category", "gc":
		if gc, ok := generalCategory(value); ok {
			return charSet{re2: gc}, nil
		}
	case "Script", "sc", "Script_Extensions", "scx":
		long := value
		if l, ok := scriptAliases[value]; ok {
			long = l
		}
		if !knownScript(long) {
			break
		}
		if name == "Script_Extensions" || name == "scx" {
			return charSet{}, unsupportedf("unicode property %s (Go's tables have no Script_Extensions; use Script=)", body)
		}
		switch long {
		case "Unknown":
			var all []runeSet
			for _, t := range unicode.Scripts {
				all = append(all, tableSet(t))
			}
			return charSet{set: union(all...).complement()}, nil
		case "Katakana_Or_Hiragana":
			return charSet{set: nil}, nil // no code point has this Script value
		}
		return charSet{re2: long}, nil
	}
	return charSet{}, errUnknownProperty
}

// knownScript reports whether long is a Script value ECMA-262 accepts.
func knownScript(long string) bool {
	if _, ok := unicode.Scripts[long]; ok {
		return true
	}
	return long == "Unknown" || long == "Katakana_Or_Hiragana"
}

// re2Table returns the Go table behind an RE2 class name (a General_Category
// or a Script).
func re2Table(name string) runeSet {
	if t, ok := unicode.Categories[name]; ok {
		return tableSet(t)
	}
	return tableSet(unicode.Scripts[name])
}
