/** One instruction of a Dockerfile: its keyword in capitals, and the rest of it on one line. */
export interface Instruction {
  keyword: string;
  args: string;
}

/** A Dockerfile's instructions, in order: continued lines joined, comments and blank lines left out. */
export function instructions(dockerfile: string): Instruction[] {
  const logical: string[] = [];
  let current = '';
  for (const line of dockerfile.split('\n')) {
    if (current === '' && /^\s*(#|$)/.test(line)) continue;
    if (line.trimEnd().endsWith('\\')) {
      current += `${line.trimEnd().slice(0, -1).trim()} `;
      continue;
    }
    logical.push(`${current}${line.trim()}`);
    current = '';
  }
  return logical.map((line) => {
    const [keyword = '', ...rest] = line.split(/\s+/);
    return { keyword: keyword.toUpperCase(), args: rest.join(' ') };
  });
}

/** The instructions of each stage: from its FROM to the next one. */
export function stages(dockerfile: string): Instruction[][] {
  const result: Instruction[][] = [];
  for (const instruction of instructions(dockerfile)) {
    if (instruction.keyword === 'FROM') result.push([]);
    result.at(-1)?.push(instruction);
  }
  return result;
}

/** The variables the final stage's ENV instructions set (`ENV A=1 B=2`). */
export function environment(dockerfile: string): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const { keyword, args } of stages(dockerfile).at(-1) ?? []) {
    if (keyword !== 'ENV') continue;
    for (const [, name, value] of args.matchAll(/(\w+)=(\S*)/g)) variables[name!] = value!;
  }
  return variables;
}

/** The exec form of HEALTHCHECK's command (`HEALTHCHECK --interval=30s CMD ["node", "-e", "…"]`). */
export function healthcheckCommand(dockerfile: string): string[] | undefined {
  const healthcheck = (stages(dockerfile).at(-1) ?? []).find(({ keyword }) => keyword === 'HEALTHCHECK');
  const exec = healthcheck?.args.match(/\bCMD\s+(\[.*\])$/)?.[1];
  return exec === undefined ? undefined : (JSON.parse(exec) as string[]);
}

/** The variables a `.env` file sets, `KEY=value` a line. */
export function dotenv(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split('\n')
      .map((line) => line.match(/^\s*([A-Za-z_]\w*)=(.*)$/))
      .filter((match) => match !== null)
      .map((match) => [match[1]!, match[2]!.trim()]),
  );
}
