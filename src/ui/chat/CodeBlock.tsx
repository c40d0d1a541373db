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

/** What makes a code block's <pre> reachable from the keyboard (see Markdown.tsx). */
export type ScrollableCode = { tabIndex: 0; role: 'group'; 'aria-label': string };

/*
 * One Light's token colours darker, each by as little as reaches WCAG AA's 4.5:1 against the
 * block's background, hsl(230, 1%, 98%): the original comment grey is 2.5:1, the string green
 * 3.1:1, the function blue 3.9:1. The hues stay, so the theme still looks like One Light.
 */
const readable: Record<string, string> = {
  'hsl(230, 4%, 64%)': 'hsl(230, 4%, 45%)', // comment, prolog
  'hsl(35, 99%, 36%)': 'hsl(35, 99%, 32%)', // number, class name, constant
  'hsl(5, 74%, 59%)': 'hsl(5, 74%, 48%)', // property, tag
  'hsl(119, 34%, 47%)': 'hsl(119, 34%, 37%)', // string, selector
  'hsl(221, 87%, 60%)': 'hsl(221, 87%, 55%)', // function, operator, variable
  'hsl(198, 99%, 37%)': 'hsl(198, 99%, 34%)', // url
};
const style = Object.fromEntries(
  Object.entries(oneLight).map(([selector, rules]) => {
    const color = typeof rules.color === 'string' ? readable[rules.color] : undefined;
    return [selector, color ? { ...rules, color } : rules];
  }),
);

/**
 * A highlighted code block. Its own chunk (src/ui/chat/Markdown.tsx loads it with the first
 * code block a reply contains), so the chat screen itself does not wait for the grammars.
 */
export function CodeBlock({
  language,
  text,
  scrollable,
}: {
  language: string | undefined;
  text: string;
  scrollable: ScrollableCode;
}) {
  return (
    <SyntaxHighlighter {...scrollable} language={language} style={style} customStyle={{ margin: 0, outline: 'none' }}>
      {text}
    </SyntaxHighlighter>
  );
}
