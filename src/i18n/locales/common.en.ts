import type { commonRu } from './common.ru';

export const commonEn: typeof commonRu = {
  appName: 'ImageGen Studio',
  loading: 'Loading…',
  nav: {
    dashboard: 'AI Generator',
    portrait: 'Portrait Creator',
    gallery: 'Your Gallery',
    chat: 'AI Chat',
    billing: 'Billing',
    menu: 'Menu',
    closeMenu: 'Close menu',
  },
  header: {
    balance: 'Balance',
    tokens_one: '{{count}} token',
    tokens_few: '{{count}} tokens',
    tokens_many: '{{count}} tokens',
    tokens_other: '{{count}} tokens',
    logout: 'Logout',
    language: 'Language',
    account: 'Account',
  },
  languages: { ru: 'Русский', en: 'English' },
  login: {
    title: 'Create images with AI',
    subtitle: 'Sign in to generate images and portraits and to chat with AI. New users get 50 tokens.',
    signIn: 'Sign in with Google',
    signUp: 'Sign up with Google',
    or: 'or',
    redirecting: 'Taking you to sign-in…',
    failed: 'Sign-in failed. Please try again.',
    unavailable: 'Sign-in is unavailable right now. Please try again later.',
    disabled: 'This account has been disabled. Contact support if you think this is a mistake.',
    features: {
      aiPowered: { title: 'AI-powered', text: 'State-of-the-art Stable Diffusion and language models.' },
      styles: { title: 'Multiple styles', text: 'Anime, cinematic, pixel art and a dozen more presets.' },
      quality: { title: 'High quality', text: 'Images up to 1.5 megapixels in seconds.' },
    },
  },
  fallback: {
    title: 'Something went wrong',
    tryAgain: 'Please try again',
    refresh: 'Refresh page',
  },
  notFound: {
    title: 'Page not found',
    back: 'Go home',
  },
  errors: {
    'Network error occurred': 'Network error occurred',
    'Unauthorized access': 'Unauthorized access',
    'Access forbidden': 'Access forbidden',
    'Resource not found': 'Resource not found',
    'Internal server error': 'Internal server error',
    'Please check your input': 'Please check your input',
    'Insufficient tokens': 'Insufficient tokens',
    'Something went wrong': 'Something went wrong',
    'Please try again later': 'Please try again later',
    'The image could not be saved, and your tokens were refunded':
      'The image could not be saved, and your tokens were refunded',
    'This account has been disabled': 'This account has been disabled',
  },
  toast: {
    close: 'Close',
  },
};
