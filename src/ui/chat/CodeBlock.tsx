// The light build (sideEffects: false lets the bundler drop the rest of the package).
import { PrismLight as SyntaxHighlighter } from 'react-syntax-highlighter';
import bash from 'react-syntax-highlighter/dist/esm/languages/prism/bash';
import css from 'react-syntax-highlighter/dist/esm/languages/prism/css';
import javascript from 'react-syntax-highlighter/dist/esm/languages/prism/javascript';
import json from 'react-syntax-highlighter/dist/esm/languages/prism/json';
import python from 'react-syntax-highlighter/dist/esm/languages/prism/python';
import sql from 'react-syntax-highlighter/dist/esm/languages/prism/sql';
import tsx from 'react-syntax-highlighter/dist/esm/languages/prism/tsx';
import typescript from 'react-syntax-highlighter/dist/esm/languages/prism/typescript';
import oneLight from 'react-syntax-highlighter/dist/esm/styles/prism/one-light';

// Only the languages it highlights are registered; anything else is shown as plain text.
const languages: Record<string, unknown> = { bash, css, javascript, json, python, sql, tsx, typescript };
for (const [name, grammar] of Object.entries(languages)) SyntaxHighlighter.registerLanguage(name, grammar);

/**
 * A highlighted code block. Its own chunk (src/ui/chat/Markdown.tsx loads it with the first
 * code block a reply contains), so the chat screen itself does not wait for the grammars.
 */
export function CodeBlock({ language, text }: { language: string | undefined; text: string }) {
  return (
    <SyntaxHighlighter language={language} style={oneLight} customStyle={{ margin: 0 }}>
      {text}
    </SyntaxHighlighter>
  );
}
