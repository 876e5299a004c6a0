/**
 * Just enough of the Dockerfile and .dockerignore formats to check the image's key
 * properties without a Docker engine: instructions (with line continuations, exec and
 * shell forms), stages with global ARG defaults substituted into FROM, and the
 * .dockerignore matching rules of moby/patternmatcher (last match wins, `!` re-includes,
 * `**` spans directories, a pattern that matches a parent directory matches its files).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface Instruction {
  keyword: string;
  /** Raw argument text, continuations joined. */
  args: string;
  /** Flags such as --from=build, in order. */
  flags: Record<string, string>;
  /** Exec-form arguments (a JSON array), or the shell-form words. */
  words: string[];
  /** True when the arguments were a JSON array. */
  execForm: boolean;
}

export interface Stage {
  base: string;
  name?: string;
  instructions: Instruction[];
}

export interface Dockerfile {
  globalArgs: Record<string, string>;
  stages: Stage[];
}

function splitWords(s: string): string[] {
  return s.trim().split(/\s+/).filter((w) => w.length > 0);
}

function parseInstruction(line: string): Instruction {
  const m = /^(\S+)\s*(.*)$/s.exec(line.trim());
  if (!m) throw new Error(`unparsable line: ${line}`);
  const keyword = m[1]!.toUpperCase();
  let rest = m[2] ?? '';
  const flags: Record<string, string> = {};
  for (;;) {
    const f = /^--([a-z-]+)(?:=(\S*))?\s+/.exec(rest);
    if (!f) break;
    flags[f[1]!] = f[2] ?? 'true';
    rest = rest.slice(f[0].length);
  }
  const trimmed = rest.trim();
  if (trimmed.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (Array.isArray(parsed) && parsed.every((x) => typeof x === 'string')) {
        return { keyword, args: trimmed, flags, words: parsed as string[], execForm: true };
      }
    } catch {
      // Not JSON: Docker falls back to the shell form.
    }
  }
  return { keyword, args: trimmed, flags, words: splitWords(trimmed), execForm: false };
}

export function parseDockerfile(text: string): Dockerfile {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (pending === '' && /^\s*#/.test(line)) continue;
    if (pending !== '' && /^\s*#/.test(line)) continue; // comments inside a continuation are dropped
    if (/\\\s*$/.test(line)) {
      pending += line.replace(/\\\s*$/, ' ');
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    if (full) logical.push(full);
  }
  if (pending.trim()) logical.push(pending.trim());

  const globalArgs: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of logical) {
    const ins = parseInstruction(line);
    if (ins.keyword === 'FROM') {
      const words = ins.words;
      const image = (words[0] ?? '').replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_m, v: string) => globalArgs[v] ?? '');
      const asIdx = words.findIndex((w) => w.toUpperCase() === 'AS');
      stages.push({ base: image, ...(asIdx >= 0 && words[asIdx + 1] ? { name: words[asIdx + 1] } : {}), instructions: [] });
      continue;
    }
    const stage = stages[stages.length - 1];
    if (!stage) {
      if (ins.keyword === 'ARG') {
        const [name, value] = ins.args.split('=', 2);
        globalArgs[name!.trim()] = (value ?? '').trim();
      }
      continue;
    }
    stage.instructions.push(ins);
  }
  return { globalArgs, stages };
}

/** Sources and destination of a COPY/ADD instruction. */
export function copyOperands(ins: Instruction): { sources: string[]; dest: string } {
  const words = ins.words;
  return { sources: words.slice(0, -1), dest: words[words.length - 1] ?? '' };
}

interface IgnorePattern {
  negate: boolean;
  text: string;
  regex: RegExp;
}

function cleanPath(p: string): string {
  const parts: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') parts.pop();
    else parts.push(seg);
  }
  return parts.join('/');
}

function patternToRegex(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        i++;
        if (pattern[i + 1] === '/') {
          i++;
          re += '(?:.*/)?';
        } else {
          re += '.*';
        }
      } else {
        re += '[^/]*';
      }
    } else if (c === '?') {
      re += '[^/]';
    } else if (c === '[') {
      const end = pattern.indexOf(']', i);
      if (end < 0) throw new Error(`bad character class in ${pattern}`);
      re += pattern.slice(i, end + 1).replace(/^\[!/, '[^');
      i = end;
    } else if (c === '\\' && i + 1 < pattern.length) {
      re += pattern[++i]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    } else {
      re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    }
  }
  return new RegExp(`^${re}$`);
}

export class DockerIgnore {
  readonly patterns: IgnorePattern[];

  constructor(text: string) {
    this.patterns = [];
    for (const raw of text.split('\n')) {
      let line = raw.trim();
      if (!line || line.startsWith('#')) continue;
      const negate = line.startsWith('!');
      if (negate) line = line.slice(1).trim();
      const cleaned = cleanPath(line);
      if (!cleaned) continue;
      this.patterns.push({ negate, text: cleaned, regex: patternToRegex(cleaned) });
    }
  }

  /** True when `path` (relative, forward slashes) is left out of the build context. */
  excludes(path: string): boolean {
    const file = cleanPath(path);
    const dirs = file.split('/').slice(0, -1);
    let excluded = false;
    for (const p of this.patterns) {
      let match = p.regex.test(file);
      for (let i = 0; !match && i < dirs.length; i++) match = p.regex.test(dirs.slice(0, i + 1).join('/'));
      if (match) excluded = !p.negate;
    }
    return excluded;
  }

  /** Could an exception pattern re-include something under `dir`? (Docker then walks into it.) */
  mayReinclude(dir: string): boolean {
    return this.patterns.some((p) => p.negate && (p.text === dir || p.text.startsWith(`${dir}/`) || p.text.startsWith('**')));
  }

  /** Every file of the build context rooted at `root`, as Docker would send it. */
  contextFiles(root: string): string[] {
    const out: string[] = [];
    const walk = (rel: string) => {
      for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
        const path = rel ? `${rel}/${entry.name}` : entry.name;
        if (entry.isDirectory()) {
          if (this.excludes(path) && !this.mayReinclude(path)) continue;
          walk(path);
        } else if (!this.excludes(path)) {
          out.push(path);
        }
      }
    };
    walk('');
    return out.sort();
  }
}
