package script

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Env is what an expression is worked out in: the variables' values, and
// the client's random numbers.
type Env struct {
	Vars   map[string]int64
	Random func(lo, hi int64) int64 // uniform, both ends in it
}

// Expr is a \set's expression.
type Expr interface {
	Eval(Env) (int64, error)
}

type (
	number   int64
	variable string
	random   struct{ lo, hi Expr }
	binary   struct {
		op   byte
		l, r Expr
	}
)

func (n number) Eval(Env) (int64, error) { return int64(n), nil }

func (v variable) Eval(e Env) (int64, error) {
	x, ok := e.Vars[string(v)]
	if !ok {
		return 0, fmt.Errorf(":%s has no value", string(v))
	}
	return x, nil
}

func (r random) Eval(e Env) (int64, error) {
	lo, err := r.lo.Eval(e)
	if err != nil {
		return 0, err
	}
	hi, err := r.hi.Eval(e)
	if err != nil {
		return 0, err
	}
	if hi < lo {
		return 0, fmt.Errorf("random(%d, %d): the upper end is below the lower", lo, hi)
	}
	return e.Random(lo, hi), nil
}

func (b binary) Eval(e Env) (int64, error) {
	l, err := b.l.Eval(e)
	if err != nil {
		return 0, err
	}
	r, err := b.r.Eval(e)
	if err != nil {
		return 0, err
	}
	switch b.op {
	case '+':
		return l + r, nil
	case '-':
		return l - r, nil
	case '*':
		return l * r, nil
	}
	if r == 0 {
		return 0, errors.New("division by zero")
	}
	if b.op == '/' {
		return l / r, nil
	}
	return l % r, nil
}

// exprParser reads an expression: a recursive descent over its text.
type exprParser struct {
	s     string
	i     int
	known map[string]bool
	depth int // factors open inside one another: -x, (x), random(x, y)
}

// maxNesting is how deeply an expression's factors may nest (- - x,
// ((x)), random(random(...))): far more than any script needs, and a
// bound on the parser's stack whatever the line holds.
const maxNesting = 64

// parseExpr reads an expression whose variables are those known.
func parseExpr(s string, known map[string]bool) (Expr, error) {
	p := &exprParser{s: s, known: known}
	e, err := p.sum()
	if err != nil {
		return nil, err
	}
	if p.skip(); p.i < len(p.s) {
		return nil, fmt.Errorf("%q after the expression", p.s[p.i:])
	}
	return e, nil
}

func (p *exprParser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *exprParser) peek() byte {
	if p.skip(); p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *exprParser) sum() (Expr, error) { return p.level("+-", p.product) }

func (p *exprParser) product() (Expr, error) { return p.level("*/%", p.factor) }

// level reads operands (next) joined by any of ops, left to right.
func (p *exprParser) level(ops string, next func() (Expr, error)) (Expr, error) {
	l, err := next()
	for err == nil && strings.IndexByte(ops, p.peek()) >= 0 {
		op := p.s[p.i]
		p.i++
		var r Expr
		if r, err = next(); err == nil {
			// a constant divisor of zero fails at every run: refused here
			if n, ok := constant(r); ok && n == 0 && (op == '/' || op == '%') {
				return nil, errors.New("division by zero")
			}
			l = binary{op, l, r}
		}
	}
	return l, err
}

func (p *exprParser) factor() (Expr, error) {
	if p.depth++; p.depth > maxNesting {
		return nil, fmt.Errorf("nested more than %d deep (-, parentheses, random): pidb reads no deeper", maxNesting)
	}
	defer func() { p.depth-- }()
	switch c := p.peek(); {
	case c == 0:
		return nil, errors.New("the expression ends where a value is wanted")
	case c == '-':
		p.i++
		f, err := p.factor()
		return binary{'-', number(0), f}, err
	case c == '(':
		p.i++
		e, err := p.sum()
		if err == nil && p.peek() != ')' {
			err = errors.New("a ( without its ): missing )")
		}
		p.i++
		return e, err
	case c == ':':
		p.i++
		name := p.word()
		if name == "" {
			return nil, errors.New("a : without a variable's name")
		}
		if !p.known[name] {
			return nil, fmt.Errorf(":%s has no value here: a \\set before this one gives it one (pidb gives :scale and :client_id)", name)
		}
		return variable(name), nil
	case c >= '0' && c <= '9':
		start := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		n, err := strconv.ParseInt(p.s[start:p.i], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: too big a number", p.s[start:p.i])
		}
		return number(n), nil
	case unicode.IsLetter(rune(c)):
		name := p.word()
		if name != "random" {
			return nil, fmt.Errorf("%s(): pidb's expressions have random() and + - * / %%, not %s", name, name)
		}
		if p.peek() != '(' {
			return nil, errors.New("random wants (lo, hi)")
		}
		p.i++
		lo, err := p.sum()
		if err != nil {
			return nil, err
		}
		if p.peek() != ',' {
			return nil, errors.New("random wants two values: random(lo, hi)")
		}
		p.i++
		hi, err := p.sum()
		if err != nil {
			return nil, err
		}
		switch p.peek() {
		case ')':
		case 0:
			return nil, errors.New("random( without its ): random(lo, hi)")
		default:
			return nil, errors.New("random wants two values: random(lo, hi)")
		}
		p.i++
		// constant ends the wrong way round fail at every run: refused here
		if l, ok := constant(lo); ok {
			if h, ok := constant(hi); ok && h < l {
				return nil, fmt.Errorf("random(%d, %d): the upper end is below the lower", l, h)
			}
		}
		return random{lo, hi}, nil
	default:
		return nil, fmt.Errorf("%q where a value is wanted", string(c))
	}
}

// constant is e's value where it has neither a variable nor random(),
// which the parser can work out once: false where it cannot.
func constant(e Expr) (int64, bool) {
	switch x := e.(type) {
	case number:
		return int64(x), true
	case binary:
		if _, ok := constant(x.l); !ok {
			return 0, false
		}
		if _, ok := constant(x.r); !ok {
			return 0, false
		}
		n, err := x.Eval(Env{})
		return n, err == nil
	}
	return 0, false
}

// word reads a name: letters, digits and _.
func (p *exprParser) word() string {
	start := p.i
	for p.i < len(p.s) && (p.s[p.i] == '_' || unicode.IsLetter(rune(p.s[p.i])) || unicode.IsDigit(rune(p.s[p.i]))) {
		p.i++
	}
	return p.s[start:p.i]
}
