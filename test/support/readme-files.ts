/**
 * The files of the README's "Your own Worker" section: each code block named by its first line
 * (`// src/worker.ts`, `# wrangler.toml`) or by its fence's title (`json title="package.json"`).
 * The package test writes them into an empty folder, and so does the bundle bench.
 */
export function readmeFiles(readme: string): Map<string, string> {
  const section = readme.slice(readme.indexOf("## Your own Worker"), readme.indexOf("## Read on"));
  const files = new Map<string, string>();
  for (const [, info, body] of section.matchAll(/```([^\n]*)\n([\s\S]*?)\n```/g)) {
    const titled = /title="([^"]+)"/.exec(info!)?.[1];
    const named = /^(?:\/\/|#) ((?:src\/|test\/)?[\w.-]+\.(?:ts|toml)|\.dev\.vars)\n/.exec(body!);
    if (titled) files.set(titled, `${body}\n`);
    else if (named) files.set(named[1]!, `${body}\n`);
  }
  return files;
}
