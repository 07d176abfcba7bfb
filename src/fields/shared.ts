import { Type } from '@sinclair/typebox'

export const Placeholder = Type.String({ maxLength: 255, description: 'Hint shown inside the empty control' })
