/**
 * Screenshots of the person's page in a real browser (Debian's Chromium through
 * playwright-core, the built executable): the form, the 422 page and the receipt
 * in en, de, ar and ja, at phone and desktop widths, in test-output/screenshots/
 * (for a person to look at).
 *
 * Nothing leaves 127.0.0.1. Without Chromium these skip (INTAKE_REQUIRE_BROWSER=1 makes that a failure).
 */
import { describe, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { BrowserContext, Page } from 'playwright-core'
import type { Locale } from '../../src/i18n/index.ts'
import { browserMissing, heading, open, useBrowser } from './browser.ts'
import { DESKTOP, languageOf, PHONE, SCREENSHOTS, send, words } from './languages.ts'

// These run inside the page (page.evaluate); the test's own tsconfig has no DOM lib.
declare const document: any
declare const innerHeight: number
declare function getComputedStyle(element: unknown, pseudo?: string): any

const skipBrowser = browserMissing()
const harness = useBrowser({ tempPrefix: 'intake-browser-languages-', skip: skipBrowser })
const { createForm, responsesOf, pageUrl, withContext } = harness

// -------------------------------------------------------------- 8. screenshots

/** A realistic form, its words written in each language, as an agent would send it. */
const SHOWCASE: Record<
  'en' | 'de' | 'ar' | 'ja',
  { browser: string; form: Record<string, unknown>; answer: { name: string; email: string } }
> = {
  en: {
    browser: 'en-GB',
    answer: { name: 'Ada Lovelace', email: 'ada@example.org' },
    form: showcase({
      title: 'Book a dental appointment',
      sender: 'Riverside Dental Clinic',
      description:
        'We will confirm your appointment by email within two working days.\n- Bring your insurance card\n- Arrive 10 minutes early',
      name: ['Full name', 'As written on your insurance card.'],
      email: 'Email address',
      time: ['Preferred time of day', ['Morning', 'Afternoon', 'Evening']],
      reasons: ['Reasons for your visit', ['Check-up', 'Cleaning', 'Pain or discomfort', 'Braces']],
      date: 'Earliest date you can come',
      notes: ['Anything we should know', 'For example allergies, or if you are nervous about treatment.'],
      card: 'Photo of your insurance card',
      consent: 'I agree that the clinic may store these details to arrange my appointment',
    }),
  },
  de: {
    browser: 'de-DE',
    answer: { name: 'Jürgen Groß', email: 'juergen@example.de' },
    form: showcase({
      title: 'Zahnarzttermin vereinbaren',
      sender: 'Zahnarztpraxis am Fluss',
      description:
        'Wir bestätigen Ihren Termin innerhalb von zwei Werktagen per E-Mail.\n- Bringen Sie Ihre Versichertenkarte mit\n- Kommen Sie 10 Minuten früher',
      name: ['Vollständiger Name', 'Wie auf Ihrer Versichertenkarte.'],
      email: 'E-Mail-Adresse',
      time: ['Bevorzugte Tageszeit', ['Vormittags', 'Nachmittags', 'Abends']],
      reasons: [
        'Grund Ihres Besuchs',
        ['Kontrolluntersuchung', 'Professionelle Zahnreinigung', 'Schmerzen oder Beschwerden', 'Zahnspange'],
      ],
      date: 'Frühestmöglicher Termin',
      notes: ['Was sollten wir wissen?', 'Zum Beispiel Allergien, oder ob Sie vor der Behandlung nervös sind.'],
      card: 'Foto Ihrer Versichertenkarte',
      consent: 'Ich bin einverstanden, dass die Praxis diese Angaben zur Terminvereinbarung speichert',
    }),
  },
  ar: {
    browser: 'ar-EG',
    answer: { name: 'ليلى أحمد', email: 'layla@example.org' },
    form: showcase({
      title: 'حجز موعد لدى طبيب الأسنان',
      sender: 'عيادة النهر لطب الأسنان',
      description:
        'سنؤكد موعدك عبر البريد الإلكتروني خلال يومي عمل.\n- أحضر بطاقة التأمين الخاصة بك\n- احضر قبل الموعد بعشر دقائق',
      name: ['الاسم الكامل', 'كما هو مكتوب على بطاقة التأمين.'],
      email: 'البريد الإلكتروني',
      time: ['الوقت المفضل من اليوم', ['صباحًا', 'بعد الظهر', 'مساءً']],
      reasons: ['سبب الزيارة', ['فحص دوري', 'تنظيف', 'ألم أو انزعاج', 'تقويم الأسنان']],
      date: 'أقرب تاريخ يمكنك الحضور فيه',
      notes: ['هل هناك ما يجب أن نعرفه؟', 'مثل الحساسية، أو إن كنت تشعر بالقلق من العلاج.'],
      card: 'صورة بطاقة التأمين',
      consent: 'أوافق على أن تحفظ العيادة هذه البيانات لترتيب موعدي',
    }),
  },
  ja: {
    browser: 'ja-JP',
    answer: { name: '山田 花子', email: 'hanako@example.jp' },
    form: showcase({
      title: '歯科の予約',
      sender: 'リバーサイド歯科クリニック',
      description: 'ご予約は2営業日以内にメールで確定します。\n- 保険証をお持ちください\n- 10分前にお越しください',
      name: ['氏名', '保険証に記載のとおりに入力してください。'],
      email: 'メールアドレス',
      time: ['希望の時間帯', ['午前', '午後', '夕方']],
      reasons: ['受診の理由', ['定期検診', 'クリーニング', '痛み・違和感', '矯正']],
      date: '来院可能な最も早い日',
      notes: ['お伝えいただきたいこと', 'アレルギーや治療への不安など。'],
      card: '保険証の写真',
      consent: '予約の手配のため、クリニックがこの情報を保存することに同意します',
    }),
  },
}

function showcase(w: {
  title: string
  sender: string
  description: string
  name: [string, string]
  email: string
  time: [string, string[]]
  reasons: [string, string[]]
  date: string
  notes: [string, string]
  card: string
  consent: string
}) {
  return {
    title: w.title,
    description: w.description,
    expires_in: '7d',
    page: { sender: w.sender, time_zone: 'Europe/Berlin' },
    fields: [
      {
        key: 'name',
        type: 'text',
        label: w.name[0],
        description: w.name[1],
        required: true,
        config: { autocomplete: 'name' },
      },
      {
        key: 'email',
        type: 'email',
        label: w.email,
        required: true,
        config: { autocomplete: 'email', placeholder: 'name@example.com' },
      },
      { key: 'time', type: 'select', label: w.time[0], required: true, config: { options: w.time[1] } },
      { key: 'reasons', type: 'select', label: w.reasons[0], config: { multiple: true, options: w.reasons[1] } },
      { key: 'date', type: 'date', label: w.date, config: { min: '2026-01-01', max: '2027-12-31' } },
      { key: 'notes', type: 'textarea', label: w.notes[0], description: w.notes[1], config: { rows: 3 } },
      { key: 'card', type: 'file', label: w.card, config: { accept: 'image/*,.pdf', max_size: 5 * 1024 * 1024 } },
      { key: 'consent', type: 'checkbox', label: w.consent, required: true },
    ],
  }
}

describe.skipIf(skipBrowser)('screenshots (test-output/screenshots/, for a person to look at)', () => {
  test('the form, the 422 page and the receipt in en, de, ar and ja, at phone and desktop width', async () => {
    mkdirSync(SCREENSHOTS, { recursive: true })
    const saved: string[] = []
    const shoot = async (page: Page, locale: string, state: string, width: string) => {
      const path = join(SCREENSHOTS, `${locale}-${state}-${width}.png`)
      await page.screenshot({ path, fullPage: true })
      saved.push(path)
    }
    for (const [locale, { browser, form: body, answer }] of Object.entries(SHOWCASE)) {
      for (const [width, viewport] of [
        ['phone', PHONE],
        ['desktop', DESKTOP],
      ] as const) {
        const form = await createForm(body)
        await withContext({ locale: browser, viewport }, async (context: BrowserContext) => {
          const { page } = await open(context, pageUrl(form.id))
          expect((await languageOf(page)).lang).toBe(locale)
          await shoot(page, locale, 'form', width)

          await page.locator('#field-email').fill(answer.email.replace('.', ''))
          const refused = await send(page)
          expect(refused.status()).toBe(422)
          // The summary is focused (its ring shows in the picture, as a person would see it).
          await shoot(page, locale, '422', width)

          await page.locator('#field-name').fill(answer.name)
          await page.locator('#field-email').fill(answer.email)
          await page.locator('#field-time').check()
          await page.locator('#field-reasons-1').check()
          await page.locator('#field-consent').check()
          await page.locator('#field-notes').fill(`${answer.name}\n${answer.email}`)
          const sent = await send(page)
          expect(sent.status()).toBe(303)
          expect(await heading(page)).toBe(words(locale as Locale, 'receipt.heading'))
          await shoot(page, locale, 'receipt', width)
        })
        expect(Object.keys((await responsesOf(form.id))[0]?.data ?? {}).sort()).toEqual([
          'consent',
          'email',
          'name',
          'notes',
          'reasons',
          'time',
        ])
      }
    }
    expect(saved).toHaveLength(4 * 3 * 2)
  }, 90_000)
})

test.skipIf(skipBrowser)('no page made a request to anything but the intake server on 127.0.0.1', () => {
  expect(harness.foreignRequests).toEqual([])
})
