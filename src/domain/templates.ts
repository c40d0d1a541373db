/**
 * What the prompt templates fill in: one English prompt per template, in every interface
 * language, because the models understand English best (the forms say so next to the
 * templates). Their labels are in the language's texts (src/i18n/locales).
 */
export const GENERATION_TEMPLATE_PROMPTS = {
  portrait:
    'Close-up portrait of a young woman with freckles by a window, soft natural light, shallow depth of field, 85mm photo, detailed skin texture',
  landscape:
    'Misty mountain valley at sunrise, a winding river, pine forests, golden light breaking through clouds, wide-angle landscape photography',
  abstract:
    'Abstract composition of flowing liquid colours, deep blue and gold swirls, marble texture, high contrast, elegant and dynamic',
  character:
    'Full-body fantasy character, a wandering elf ranger in a green cloak with a longbow, detailed armour, dramatic lighting, concept art',
  architecture:
    'Modern glass and concrete villa on a cliff above the sea, minimalist architecture, sunset reflections, architectural photography',
  food: 'Rustic wooden table with freshly baked sourdough bread, butter and honey, morning light, food photography, shallow depth of field',
  anime:
    'Anime girl with silver hair standing on a rooftop at dusk, city lights below, cherry blossoms in the wind, vibrant colours, detailed illustration',
  cyberpunk:
    'Neon-lit cyberpunk street at night in the rain, holographic signs, crowds with umbrellas, flying cars, reflections on wet asphalt, cinematic',
} as const;
export type GenerationTemplate = keyof typeof GENERATION_TEMPLATE_PROMPTS;

export const PORTRAIT_TEMPLATE_PROMPTS = {
  male: {
    business: 'Business portrait of a man in a dark suit, studio lighting, neutral grey backdrop',
    explorer: 'A man exploring the mountains, outdoor jacket, wind, golden sunset light',
    noir: 'Black and white portrait of a man in a hat, film noir, hard shadows, smoke',
    knight: 'A man in medieval armour, a castle behind him, cinematic lighting',
    cyberpunk: 'A man in a cyberpunk city at night, neon signs, rain',
    vintage: 'Vintage 1950s portrait of a man, film grain, warm tones',
  },
  female: {
    business: 'Business portrait of a woman in a light blazer, soft studio light, office behind her',
    golden: 'A woman in a field at golden hour, a light breeze in her hair, warm light',
    noir: 'Black and white old Hollywood portrait of a woman, soft rim light',
    fantasy: 'A woman as an elf in an enchanted forest, a flower crown, a magical glow',
    cyberpunk: 'A woman in a cyberpunk city at night, neon reflections, a futuristic jacket',
    winter: 'A woman in a winter forest, a wool scarf, falling snow, cool tones',
  },
} as const;
