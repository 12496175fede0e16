// c.js — imports a.js back: the cycle a -> b -> c -> a
import { a } from './a.js';
export const c = () => a;
