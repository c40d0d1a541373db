import 'i18next';
import type { Texts } from './index';

declare module 'i18next' {
  interface CustomTypeOptions {
    defaultNS: 'common';
    resources: Texts;
  }
}
