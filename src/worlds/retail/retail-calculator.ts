/**
 * The benchmark's `calculate` tool: Python's `str(round(float(eval(expression)), 2))` over
 * digits, `+ - * / ( ) .` and spaces. A small parser instead of `eval`: the same grammar
 * Python reads from those characters (`//` floor division and `**` power included).
 */
import { pyFloatString, pyRound2 } from '../../sandbox/providers/retail/py-round.js';

const ALLOWED = /^[0-9+\-*/(). ]*$/;

/** The tool's answer for `expression`, an `Error: …` string when it cannot be computed. */
export function calculate(expression: string): string {
  if (!ALLOWED.test(expression)) return 'Error: invalid characters in expression';
  try {
    const parser = new Parser(expression);
    const value = parser.parse();
    return pyFloatString(pyRound2(value));
  } catch (error) {
    return `Error: ${error instanceof Error ? error.message : String(error)}`;
  }
}

class Parser {
  private position = 0;
  private readonly tokens: string[];

  constructor(expression: string) {
    this.tokens = expression.match(/\d*\.\d*|\d+|\*\*|\/\/|[-+*/()]/g) ?? [];
    if (this.tokens.join('') !== expression.replace(/ /g, '')) throw new Error('invalid syntax');
  }

  parse(): number {
    if (this.tokens.length === 0) throw new Error('invalid syntax');
    const value = this.sum();
    if (this.position !== this.tokens.length) throw new Error('invalid syntax');
    return value;
  }

  private peek(): string | undefined {
    return this.tokens[this.position];
  }

  private sum(): number {
    let value = this.product();
    for (let next = this.peek(); next === '+' || next === '-'; next = this.peek()) {
      this.position++;
      const right = this.product();
      value = next === '+' ? value + right : value - right;
    }
    return value;
  }

  private product(): number {
    let value = this.unary();
    for (
      let next = this.peek();
      next === '*' || next === '/' || next === '//';
      next = this.peek()
    ) {
      this.position++;
      const right = this.unary();
      if (next !== '*' && right === 0) throw new Error('division by zero');
      value =
        next === '*' ? value * right : next === '/' ? value / right : Math.floor(value / right);
    }
    return value;
  }

  private unary(): number {
    const next = this.peek();
    if (next === '-' || next === '+') {
      this.position++;
      const value = this.unary();
      return next === '-' ? -value : value;
    }
    return this.power();
  }

  private power(): number {
    const base = this.atom();
    if (this.peek() === '**') {
      this.position++;
      return base ** this.unary();
    }
    return base;
  }

  private atom(): number {
    const token = this.tokens[this.position++];
    if (token === '(') {
      const value = this.sum();
      if (this.tokens[this.position++] !== ')') throw new Error("'(' was never closed");
      return value;
    }
    if (token === undefined || !/^(\d+\.?\d*|\.\d+)$/.test(token))
      throw new Error('invalid syntax');
    return Number(token);
  }
}
